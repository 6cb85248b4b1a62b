"""``leaderboard.html``: the leaderboard as one self-contained page (no external file, script or font).

A sortable table (click a header; values carry their 95% interval), the privacy-utility Pareto plot as inline
SVG, per-test-case details (every metric and hyperparameter), and the caveats (randomness, cache replays,
ranking rule).  Built from the same summaries as report.md.
"""
from __future__ import annotations

import html
import math
from typing import Any, Dict, List, Optional, Sequence

from .leaderboard import ARROWS, describe_rule, direction, header

ROUTES = ("edge", "collaborative", "cloud")

_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px;color:#1d2430;background:#fff}
h1{font-size:22px;margin:0 0 6px} h2{font-size:17px;margin:26px 0 8px}
.note{background:#f4f6fa;border-left:4px solid #3a6ea5;padding:8px 12px;margin:8px 0;font-size:13px}
.warn{border-left-color:#c0392b;background:#fbeeee}
table{border-collapse:collapse;font-size:12px;margin-top:6px}
.wide{overflow-x:auto;max-width:100%}
th,td{border:1px solid #d5dae3;padding:5px 8px;text-align:left;vertical-align:top}
th{background:#e9eef6;cursor:pointer;user-select:none;white-space:nowrap}
th.sorted-asc::after{content:" \\25B2"} th.sorted-desc::after{content:" \\25BC"}
tr:nth-child(even) td{background:#fafbfd}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.ci{color:#6b7280;font-size:11px} .front{color:#1e7d32;font-weight:600} .dom{color:#8a8f98}
details{margin:4px 0} summary{cursor:pointer;font-weight:600}
svg text{font-size:11px;fill:#1d2430}
"""

_SCRIPT = """
(function(){
  var table=document.getElementById('board');
  var heads=table.tHead.rows[0].cells;
  function key(cell){var v=cell.getAttribute('data-v');
    if(v===null||v===''){return null;} var f=parseFloat(v); return isNaN(f)?v:f;}
  function sortBy(idx,asc){
    var body=table.tBodies[0]; var rows=Array.prototype.slice.call(body.rows);
    rows.sort(function(a,b){var x=key(a.cells[idx]),y=key(b.cells[idx]);
      if(x===null&&y===null){return 0;} if(x===null){return 1;} if(y===null){return -1;}
      if(x<y){return asc?-1:1;} if(x>y){return asc?1:-1;} return 0;});
    rows.forEach(function(r){body.appendChild(r);});
    for(var j=0;j<heads.length;j++){heads[j].classList.remove('sorted-asc','sorted-desc');}
    heads[idx].classList.add(asc?'sorted-asc':'sorted-desc');
  }
  for(var i=0;i<heads.length;i++){(function(idx){
    heads[idx].addEventListener('click',function(){
      var cls=heads[idx].classList; var asc=cls.contains('sorted-asc')?false:
        (cls.contains('sorted-desc')?true:heads[idx].getAttribute('data-better')!=='higher');
      sortBy(idx,asc);});})(i);}
  document.body.setAttribute('data-ready','1');
})();
"""


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _est_cell(est: Any, nd: int) -> str:
    if est is None or est.n == 0 or math.isnan(est.value):
        return '<td class="num" data-v=""></td>'
    ci = "" if math.isnan(est.low) else f'<br><span class="ci">[{est.low:.{nd}f}, {est.high:.{nd}f}] n={est.n}</span>'
    return f'<td class="num" data-v="{est.value!r}">{est.value:.{nd}f}{ci}</td>'


def _padded(values: List[float]) -> tuple:
    """The axis range of ``values`` with 8% room on each side (±0.5 around a single value)."""
    lo, hi = min(values), max(values)
    if hi <= lo:
        return lo - 0.5, hi + 0.5
    pad = 0.08 * (hi - lo)
    return lo - pad, hi + pad


def _pareto_svg(summaries: List[Dict[str, Any]], pareto: Dict[str, Any]) -> str:
    """Leakage (x, lower is better) against utility (y, higher is better); filled = Pareto front, hollow =
    dominated; points are numbered by leaderboard position."""
    points = pareto.get("points") or {}
    pos = {s["label"]: i for i, s in enumerate(summaries, 1)}
    pts = [(lab, x, y) for lab, (x, y) in points.items() if not (math.isnan(x) or math.isnan(y))]
    if not pts:
        return "<p>No test case has both a leakage and a utility value: no Pareto plot.</p>"
    w, h, m = 560, 360, 50
    xs, ys = [p[1] for p in pts], [p[2] for p in pts]
    (x0, x1), (y0, y1) = _padded(xs), _padded(ys)
    sx = lambda v: m + (v - x0) / (x1 - x0) * (w - 2 * m)  # noqa: E731
    sy = lambda v: h - m - (v - y0) / (y1 - y0) * (h - 2 * m)  # noqa: E731
    dom = pareto.get("dominated") or {}
    parts = [f'<svg id="pareto" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
             f'viewBox="0 0 {w} {h}" role="img" aria-label="privacy-utility Pareto plot">',
             f'<rect x="0" y="0" width="{w}" height="{h}" fill="#ffffff" stroke="#d5dae3"/>',
             f'<line x1="{m}" y1="{h - m}" x2="{w - m}" y2="{h - m}" stroke="#555"/>',
             f'<line x1="{m}" y1="{m}" x2="{m}" y2="{h - m}" stroke="#555"/>',
             f'<text x="{w / 2}" y="{h - 12}" text-anchor="middle">{_e(pareto["leak"])} (lower is more private) '
             f'(axis {x0:.3g} to {x1:.3g})</text>',
             f'<text x="14" y="{h / 2}" transform="rotate(-90 14 {h / 2})" text-anchor="middle">'
             f'{_e(pareto["util"])} (higher is more useful; axis {y0:.3g} to {y1:.3g})</text>']
    for lab, x, y in pts:
        front = not dom.get(lab)
        fill = "#2e7d32" if front else "#ffffff"
        parts.append(f'<circle class="{"front" if front else "dominated"}" cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="7" '
                     f'fill="{fill}" stroke="#2e7d32" stroke-width="2"><title>{_e(lab)}: {x:.3g}, {y:.3g}'
                     f'{"" if front else " (dominated)"}</title></circle>')
        parts.append(f'<text x="{sx(x) + 9:.1f}" y="{sy(y) - 8:.1f}">{pos.get(lab, "?")}</text>')
    parts.append("</svg>")
    return "".join(parts)


def write_html(path: str, summaries: List[Dict[str, Any]], cases: List[Dict[str, Any]], columns: Sequence[str],
               metric_names: Sequence[str], sort_by: Any, pareto: Dict[str, Any], randomness: Sequence[str],
               digits: Optional[Dict[str, int]] = None, title: str = "Benchmark leaderboard") -> str:
    """Write the page to ``path`` and return it."""
    digits = digits or {}
    replayed_total = sum(int(s["replayed"]) for s in summaries
                         if s.get("replayed") is not None and s["replayed"] == s["replayed"])
    n_total = sum(s["n"] for s in summaries)
    dom = pareto.get("dominated") or {}
    heads = [("#", "lower"), ("test case", "info"), ("method", "info"), ("ε", "info"),
             ("routes e/c/c", "info"), ("completed", "higher"), ("failed", "lower"), ("replayed", "info")]
    heads += [(header(c, sort_by), direction(c, sort_by) or "info") for c in columns] + [("Pareto", "info")]
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>",
           f"<h1>{_e(title)}</h1>",
           f'<div class="note">Ranking: {_e(describe_rule(sort_by))}; a test case that answered nothing is moved '
           "last. ↓ lower is better, ↑ higher is better, no arrow: for information. Click a header to sort.</div>",
           '<div class="note">Randomness: ' + _e("; ".join(randomness) if randomness else "not recorded") + "</div>"]
    if replayed_total:
        out.append(f'<div class="note warn">Cache replays: {replayed_total} of {n_total} answers were replayed from '
                   "the response cache: no model ran and nothing was sent for them in this run, so a failing cloud "
                   "would not show. They are left out of every latency figure; <code>run --no-cache</code> refuses "
                   "them.</div>")
    out += ['<h2>Leaderboard</h2><div class="wide"><table id="board"><thead><tr>'
            + "".join(f'<th data-better="{_e(b)}">{_e(t)}</th>' for t, b in heads) + "</tr></thead><tbody>"]
    for i, s in enumerate(summaries, 1):
        rep = s.get("replayed")
        rep_txt = "" if rep is None or rep != rep else str(int(rep))
        d = dom.get(s["label"])
        par = "" if d is None else ('<span class="front">front</span>' if not d else
                                    '<span class="dom">dominated by ' + _e(", ".join(d)) + "</span>")
        cells = [f'<td class="num" data-v="{i}">{i}</td>', f'<td data-v="{_e(s["label"])}">{_e(s["label"])}'
                 + (" <b>(answered nothing)</b>" if s["n_completed"] == 0 and s["n"] else "") + "</td>",
                 f'<td data-v="{_e(s["method"])}">{_e(s["method"])}</td>',
                 f'<td data-v="{_e(s["epsilon"])}">{_e(s["epsilon"])}'
                 + (f' <b>({_e(s["epsilon_note"])})</b>' if s["epsilon_note"] else "") + "</td>",
                 "<td>" + "/".join(str(s["routes"][r]) for r in ROUTES) + "</td>",
                 f'<td class="num" data-v="{s["n_completed"]}">{s["n_completed"]}</td>',
                 f'<td class="num" data-v="{s["n_failed"]}">{s["n_failed"]}</td>',
                 f'<td class="num" data-v="{rep_txt}">{rep_txt}</td>']
        cells += [_est_cell(s["est"].get(c), digits.get(c, 3)) for c in columns]
        cells.append(f'<td data-v="{"" if d is None else (0 if not d else 1)}">{par}</td>')
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table></div>")
    if pareto.get("points"):
        out += [f"<h2>Privacy-utility Pareto view ({_e(pareto['leak'])} ↓ against {_e(pareto['util'])} ↑)</h2>",
                "<p>Filled: on the Pareto front (no other test case leaks no more and is at least as useful); "
                "hollow: dominated. Numbers are leaderboard positions.</p>", _pareto_svg(summaries, pareto)]
    out.append("<h2>Per test case</h2>")
    for i, (s, c) in enumerate(zip(summaries, cases), 1):
        rows = "".join(f"<tr><td>{_e(k)} {ARROWS[direction(k, sort_by)]}</td><td>{_e(e.fmt(digits.get(k, 3)))}</td></tr>"
                       for k, e in s["est"].items())
        hps = "".join(f"<tr><td>{_e(k)}</td><td>{_e(v)}</td></tr>" for k, v in c["row"].items()
                      if k not in metric_names and k not in ("rank", "url", "time"))
        out.append(f"<details><summary>{i}. {_e(s['label'])}</summary><table><tbody>{rows}</tbody></table>"
                   f"<table><tbody>{hps}</tbody></table></details>")
    out += ["<h2>Caveats</h2><ul>",
            "<li>Intervals are 95% percentile-bootstrap intervals over samples; with few samples most differences "
            "are not significant (see report.md for the paired tests).</li>",
            "<li>Benchmark randomness is reproducible from the YAML seed: its privacy guarantees do not hold against "
            "whoever knows the seed.</li>",
            "<li>Answers replayed from the response cache are counted in the <i>replayed</i> column and never enter "
            "latency.</li>", "<li>A failed sample has no answer and counts as zero utility.</li></ul>",
            f"<script>{_SCRIPT}</script></body></html>"]
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(out) + "\n")
    return path
