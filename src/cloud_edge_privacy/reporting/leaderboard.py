"""What a leaderboard column means and how rows compare: the declared direction of every metric, the ranking
rule in Ianvs terms, the privacy-utility Pareto view, and the short console table.

Ianvs ranks test cases by ``rank.sort_by`` in ``benchmarkingjob.yaml``: a list of ``{metric: ascend|descend}``,
the first key decides, the next ones only break ties (docs/ianvs-contract.md §8).  The shipped jobs put leakage
first (``leak_direct``, then ``n_failed`` so that a configuration that answers nothing cannot win by leaking
nothing, then ``sels``), then the example's own utility metric (``llm_judge``: the judge's score of the final
answer, 0 for a sample that got none; then ``cpp``, how much of the content the sent text lost, a deterministic
tie-breaker where a coarse judge ties), and latency last (``latency_mean_ms``, which leaves out answers replayed
from a cache).  The direction of a metric that the job does not sort by comes from :data:`METRICS`; a metric
known to neither is shown as ``?`` rather than guessed.  Directions are declared once, in
``metrics/catalog.py``.
"""
from __future__ import annotations

import math
from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from ..metrics.catalog import HIGHER, INFO, LOWER, METRICS

ARROWS = {LOWER: "↓", HIGHER: "↑", INFO: "", None: "?"}


def sort_keys(sort_by: Any) -> List[Tuple[str, str]]:
    """``rank.sort_by`` as (metric, direction) pairs; Ianvs sorts ascending only for the exact 'ascend'."""
    out = []
    for item in sort_by or []:
        if isinstance(item, dict) and item:
            name, how = next(iter(item.items()))
            out.append((str(name), LOWER if how == "ascend" else HIGHER))
    return out


def direction(name: str, sort_by: Any = None) -> Optional[str]:
    """The declared direction of ``name``: the job's ``sort_by`` first, else :data:`METRICS`, else None."""
    for key, how in sort_keys(sort_by):
        if key == name:
            return how
    info = METRICS.get(name)
    return info.direction if info else None


def header(name: str, sort_by: Any = None) -> str:
    """Column header with its direction: ``sels ↓``, ``llm_judge ↑``, ``edge_ratio``, ``mystery ?``."""
    arrow = ARROWS[direction(name, sort_by)]
    return f"{name} {arrow}".strip()


def describe_rule(sort_by: Any) -> str:
    """The ranking rule in words, e.g. 'leak_direct (lower first), then n_failed (lower first), ...'."""
    keys = sort_keys(sort_by)
    if not keys:
        return "no rank.sort_by: rows stay in test-case order"
    words = [f"`{k}` ({'lower' if d == LOWER else 'higher'} first)" for k, d in keys]
    return "by " + words[0] + "".join(f", ties broken by {w}" for w in words[1:])


def _num(x: Any) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return math.nan
    return v


def pareto_dominated(points: Mapping[str, Tuple[float, float]]) -> Dict[str, List[str]]:
    """``{label: [labels that dominate it]}`` for points ``label -> (leakage, utility)``: lower leakage and
    higher utility are better; a point is dominated when another is at least as good on both and strictly better
    on one.  Points with a NaN coordinate are left out (neither dominated nor dominating)."""
    ok = {k: v for k, v in points.items() if not any(math.isnan(x) for x in v)}
    out: Dict[str, List[str]] = {k: [] for k in ok}
    for a, (la, ua) in ok.items():
        for b, (lb, ub) in ok.items():
            if a != b and lb <= la and ub >= ua and (lb < la or ub > ua):
                out[a].append(b)
    return out


def pareto_axes(metric_names: Sequence[str], have_apr: bool) -> Tuple[Optional[str], Optional[str]]:
    """The leakage and utility metrics of the Pareto view: the first leakage metric the job has, and its own
    utility metric (APR similarity when the report computed it)."""
    leak = next((m for m in ("sels", "leak_direct", "ts_attack_event_success", "iar_trir") if m in metric_names), None)
    util = "apr_similarity" if have_apr else next(
        (m for m in ("llm_judge", "ts_sts_cloud", "token_precision") if m in metric_names), None)
    return leak, util


def fmt_cell(v: Any, nd: int = 3) -> str:
    x = _num(v)
    if math.isnan(x):
        return "" if v in (None, "") else str(v)
    if math.isinf(x):  # e.g. the unprotected time-series row's epsilon
        return "inf" if x > 0 else "-inf"
    return str(int(x)) if x == int(x) and abs(x) < 1e12 else f"{x:.{nd}f}"


def text_table(rows: List[List[str]], head: List[str]) -> str:
    """A plain fixed-width table."""
    widths = [max(len(str(r[i])) for r in [head] + rows) for i in range(len(head))]
    line = lambda r: "  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    return "\n".join([line(head), line(["-" * w for w in widths])] + [line(r) for r in rows])


def console_table(cases: List[Dict[str, Any]], sort_by: Any, metric_names: Sequence[str], max_metrics: int = 6,
                  dominated: Optional[Set[str]] = None) -> str:
    """The short table ``run`` prints: one row per test case named by what differs, the sort keys first (with
    their direction), the cache replays, then a few more metrics."""
    keys = [k for k, _ in sort_keys(sort_by) if k in metric_names]
    extra = [m for m in metric_names if m not in keys and m not in ("cache_replays",)]
    cols = (keys + extra)[:max(max_metrics, len(keys))]
    head = ["#", "test case", "done/failed", "replayed"] + [header(c, sort_by) for c in cols]
    rows = []
    for i, c in enumerate(cases, 1):
        preds = c.get("preds") or []
        failed = sum(p.get("status", "ok") != "ok" for p in preds)
        replayed = sum(bool(p.get("replayed")) for p in preds)
        label = c["label"] + (" (dominated)" if dominated and c["label"] in dominated else "")
        rows.append([str(i), label, f"{len(preds) - failed}/{failed}", str(replayed)]
                    + [fmt_cell(c["row"].get(m)) for m in cols])
    return text_table(rows, head)
