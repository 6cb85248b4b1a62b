"""Markdown report of a run: a readable leaderboard, per-sample metrics with n and 95% bootstrap intervals,
paired differences to the unprotected baseline, APR, plots, failures, and provenance.

Next to Ianvs's ``rank/all_rank.csv`` (left in Ianvs's format) it writes ``rank/leaderboard.csv``: one row
per test case named by what differs between test cases, the deciding columns first, then everything else; and
``leaderboard.html`` next to report.md (see :mod:`cloud_edge_privacy.reporting.report_html`).  The columns are the job's
own metrics (from all_rank.csv), each with its declared direction (:mod:`cloud_edge_privacy.reporting.leaderboard`).
"""
from __future__ import annotations

import csv
import json
import math
import os
import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..hashing import sha256_file, stable_hash
from .leaderboard import METRICS, describe_rule, header, pareto_axes, pareto_dominated, sort_keys
from . import machine as machine_state
from ..models.catalog import MODELS
from ..metrics.stats import Estimate, bootstrap_ci, paired_difference

BASELINE = "none"
EPSILON_MEANINGLESS = 10.0
ROUTES = ("edge", "collaborative", "cloud")


def _config_files(config_path: str) -> Dict[str, str]:
    import yaml

    files = {config_path: sha256_file(config_path)}
    with open(config_path, encoding="utf-8") as fh:
        job = (yaml.safe_load(fh) or {}).get("benchmarkingjob", {})
    paths = [job.get("testenv")] + [a.get("url") for a in (job.get("test_object") or {}).get("algorithms", [])]
    for p in paths:
        if p and os.path.isfile(p):
            files[p] = sha256_file(p)
    return files


def _fmt(x: float, nd: int = 3) -> str:
    return "" if x is None or x != x else f"{x:.{nd}f}"


def _num(x: Any) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


def epsilon_note(eps: Any) -> str:
    """'no meaningful guarantee' for ε > 10 (e^10 > 22,000: the output barely constrains the input)."""
    e = _num(eps)
    return "no meaningful guarantee" if not math.isnan(e) and e > EPSILON_MEANINGLESS else ""


def load_gold(data_file: Optional[str]) -> Dict[str, Dict[str, Any]]:
    """doc_id -> gold dict from the run's Ianvs JSONL (``answer`` holds the gold); {} when unavailable."""
    gold: Dict[str, Dict[str, Any]] = {}
    if not data_file or not os.path.isfile(data_file):
        return gold
    with open(data_file, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            rec = json.loads(line)
            g = rec.get("answer")
            if isinstance(g, str):
                try:
                    g = json.loads(g)
                except json.JSONDecodeError:
                    g = None
            if isinstance(g, dict) and g.get("doc_id") is not None:
                gold[str(g["doc_id"])] = g
    return gold


def _status(p: Dict[str, Any]) -> str:
    from ..metrics.apr import record_status

    return record_status(p)


def _route(p: Dict[str, Any]) -> str:
    if not p.get("is_hard_example"):
        return "edge"
    return str((p.get("result") or {}).get("route") or (p.get("cloud_result") or {}).get("route") or "cloud")


def randomness_labels(cases: List[Dict[str, Any]]) -> List[str]:
    """Distinct randomness labels recorded in the results (benchmark mode states its caveat)."""
    seen: List[str] = []
    for c in cases:
        for p in c["preds"]:
            for part in (p.get("result"), p.get("cloud_result")):
                lab = (part or {}).get("randomness")
                if lab and str(lab) not in seen:
                    seen.append(str(lab))
    return seen


def case_stats(case: Dict[str, Any], gold: Dict[str, Dict[str, Any]], attacker: Any = None,
               embeddings: bool = True) -> Dict[str, Dict[str, Any]]:
    """Per-sample values ``{metric: {doc_id: value}}`` of one test case (empty without gold); TRIR only
    with an ``attacker``."""
    from ..metrics.per_sample import per_sample_values

    preds = [p for p in case["preds"] if str(p.get("doc_id")) in gold]
    if not preds:
        return {}
    y_true = [gold[str(p["doc_id"])] for p in preds]
    y_pred = [[p.get("is_hard_example"), p.get("result"), p.get("edge_result"), p.get("cloud_result")] for p in preds]
    return per_sample_values(y_true, y_pred, [str(p["doc_id"]) for p in preds], attacker, embeddings,
                             trir=attacker is not None)


def estimate(values: Dict[str, Any], kind: str) -> Estimate:
    return bootstrap_ci(list(values.values()), total=(kind == "total"))


def _aligned(a: Dict[str, Any], b: Dict[str, Any]) -> Tuple[List[Any], List[Any]]:
    keys = [k for k in a if k in b]
    return [a[k] for k in keys], [b[k] for k in keys]


def _summary(case: Dict[str, Any], stats: Dict[str, Dict[str, Any]], apr: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """The deciding values of one test case, with intervals where per-sample values exist."""
    from ..metrics.catalog import per_sample_metrics

    row, preds = case["row"], case["preds"]
    routes = {r: sum(_route(p) == r for p in preds) for r in ROUTES}
    n_failed = sum(_status(p) != "ok" for p in preds)
    out: Dict[str, Any] = {"label": case["label"], "method": row.get("cloudmodel-privacy_method") or row.get("algorithm", ""),
                           "epsilon": "" if row.get("cloudmodel-epsilon") in (None, "", "None") else row["cloudmodel-epsilon"],
                           "routes": routes, "n": len(preds), "n_failed": n_failed, "n_completed": len(preds) - n_failed,
                           "est": {}}
    out["epsilon_note"] = epsilon_note(out["epsilon"])
    for spec in per_sample_metrics():
        name = spec.name
        if name in stats:
            out["est"][name] = estimate(stats[name], spec.aggregation)
        elif not math.isnan(_num(row.get(name))):
            out["est"][name] = Estimate(_num(row.get(name)), math.nan, math.nan, len(preds))
    if apr is not None:
        out["est"]["apr_similarity"] = bootstrap_ci(apr["similarities"])
        out["est"]["apr_judge"] = bootstrap_ci([p for p in apr["judge_pairs"] if p])
    elif out["method"] == BASELINE:
        out["est"]["apr_similarity"] = Estimate(1.0, math.nan, math.nan, out["n_completed"])
    for name in metric_columns(row):  # the job's own metrics, as Ianvs computed them (no interval)
        if name not in out["est"] and not math.isnan(_num(row.get(name))):
            out["est"][name] = Estimate(_num(row.get(name)), math.nan, math.nan, len(preds))
    out["replayed"] = sum(bool(p.get("replayed")) for p in preds) if preds else _num(row.get("cache_replays"))
    out["machine"] = (case.get("meta") or {}).get("machine")
    return out


def metric_columns(row: Dict[str, Any]) -> List[str]:
    """The metric columns of an all_rank row: Ianvs writes them between ``algorithm`` and ``paradigm``."""
    keys = [k for k in row if k != "rank"]
    if "algorithm" not in keys or "paradigm" not in keys:
        return []
    return keys[keys.index("algorithm") + 1:keys.index("paradigm")]


DEFAULT_LEAD = ("leak_direct", "sels", "iar_trir", "apr_similarity", "llm_judge", "latency_mean_ms")
DIGITS = {"leak_direct": 0, "latency_mean_ms": 0, "cloud_tokens": 0, "n_completed": 0, "n_failed": 0}


def lead_columns(summaries: List[Dict[str, Any]], sort_by: Any) -> List[str]:
    """The deciding columns: the job's sort keys in order, then the usual leakage/utility/latency columns that
    some test case has a value for."""
    have = {k for s in summaries for k, e in s["est"].items() if e.n > 0 and not math.isnan(e.value)}
    cols = [k for k, _ in sort_keys(sort_by) if k in have and k not in ("n_completed", "n_failed")]
    return cols + [k for k in DEFAULT_LEAD if k in have and k not in cols]


def pareto_view(summaries: List[Dict[str, Any]], metric_names: Sequence[str]) -> Dict[str, Any]:
    """Leakage against utility per test case and which rows are dominated (see leaderboard.pareto_dominated)."""
    have_apr = any("apr_similarity" in s["est"] for s in summaries)
    leak, util = pareto_axes(list(metric_names) + [k for s in summaries for k in s["est"]], have_apr)
    if leak is None or util is None:
        return {"leak": leak, "util": util, "points": {}, "dominated": {}}
    val = lambda s, k: s["est"][k].value if k in s["est"] else math.nan  # noqa: E731
    points = {s["label"]: (val(s, leak), val(s, util)) for s in summaries}
    return {"leak": leak, "util": util, "points": points, "dominated": pareto_dominated(points)}


def _leaderboard(summaries: List[Dict[str, Any]], sort_by: Any = None, pareto: Optional[Dict[str, Any]] = None) -> List[str]:
    cols = lead_columns(summaries, sort_by)
    clock = any(c in machine_state.WALL_CLOCK for c in cols)
    pareto = pareto or {"dominated": {}}
    out = ["## Leaderboard", "",
           "Rows in the order of Ianvs's `all_rank.csv`, ranked " + describe_rule(sort_by) + ", except that a test "
           "case that completed no sample is moved last: it leaks nothing because it answers nothing. Cells: value "
           "[95% bootstrap interval] (n samples it is computed on); a value without interval is the test case's "
           "metric as Ianvs computed it. ↓ lower is better, ↑ higher is better, no arrow: for information. "
           "*Replayed*: samples whose answer came from the response cache (no model ran for them in this run; "
           "they are left out of every latency figure). The full table is `rank/leaderboard.csv`; "
           "`leaderboard.html` is the same board as a sortable page."
           + (" *Machine*: the load and cores beside the wall-clock columns (see Latency conditions)." if clock else ""),
           "",
           "| # | test case | method | ε | routes edge/collab/cloud | completed / failed | replayed | "
           + " | ".join(header(c, sort_by) for c in cols) + (" | machine" if clock else "") + " | Pareto |",
           "|" + "---|" * (8 + len(cols) + clock)]
    for i, s in enumerate(summaries, 1):
        eps = s["epsilon"] + (f" (**{s['epsilon_note']}**)" if s["epsilon_note"] else "")
        name = s["label"] + (" (**answered nothing**)" if s["n_completed"] == 0 and s["n"] else "")
        replayed = s.get("replayed")
        cells = [str(i), name, s["method"], eps, "/".join(str(s["routes"][r]) for r in ROUTES),
                 f"{s['n_completed']} / {s['n_failed']}",
                 "" if replayed is None or replayed != replayed else f"{int(replayed)}"]
        for key in cols:
            e = s["est"].get(key)
            cells.append(e.fmt(DIGITS.get(key, 3)) if e else "")
        if clock:
            cells.append(machine_state.machine_cell(s.get("machine")))
        dom = pareto["dominated"].get(s["label"])
        cells.append("" if dom is None else ("front" if not dom else "dominated by " + ", ".join(dom[:2])
                                             + (" …" if len(dom) > 2 else "")))
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    if pareto.get("points"):
        out += [f"**Pareto view** ({pareto['leak']} ↓ against {pareto['util']} ↑): a row is *dominated* when another "
                "row leaks no more and is at least as useful, and is strictly better on one of the two; *front* rows "
                "are the sensible choices, the ranking above picks among them by the sort rule.", ""]
    return out


def _columns_section(metric_names: Sequence[str], sort_by: Any) -> List[str]:
    out = ["## Columns", "", "| column | better | what it measures |", "|---|---|---|"]
    for name in list(metric_names) + [k for k in ("apr_similarity", "apr_judge") if k not in metric_names]:
        info = METRICS.get(name)
        arrow = header(name, sort_by)[len(name):].strip() or "information"
        out.append(f"| {name} | {'not declared' if arrow == '?' else arrow} | {info.description if info else ''} |")
    return out + [""]


def _metric_sections(summaries: List[Dict[str, Any]], stats: Dict[str, Dict[str, Dict[str, Any]]]) -> List[str]:
    from ..metrics.catalog import per_sample_metrics

    base = next((s for s in summaries if s["method"] == BASELINE), None)
    out = ["## Per-sample metrics with 95% bootstrap intervals", "",
           "Percentile bootstrap over samples (2,000 resamples, fixed seed). Pooled metrics (PDR, SELS, TAB "
           "scores, co-reference leak) resample documents and recompute the ratio. The last column is the "
           "paired bootstrap difference to the unprotected baseline (`none`) on the samples both have: "
           "*significant* means its 95% interval excludes 0. With few samples most differences are not.", ""]
    if not stats:
        return out + ["(no gold data for this job's samples: pass the test data to `report` to get intervals)", ""]
    for spec in per_sample_metrics():
        name, kind, desc = spec.name, spec.aggregation, spec.description
        have = [s for s in summaries if name in stats.get(s["label"], {})]
        if not have:
            continue
        out += [f"### {name}", "", desc + ("; the interval is for the total." if kind == "total" else "."), "",
                "| test case | value [95% CI] (n) | difference to `none` |", "|---|---|---|"]
        for s in have:
            diff = ""
            if base is not None and s is not base and name in stats.get(base["label"], {}):
                a, b = _aligned(stats[s["label"]][name], stats[base["label"]][name])
                diff = paired_difference(a, b).fmt() if kind != "total" else ""
            out.append(f"| {s['label']} | {s['est'][name].fmt()} | {diff} |")
        out.append("")
    return out


PAIRWISE_METRICS = ("iar_trir", "sels", "apr_similarity")


def pairwise_significance(summaries: List[Dict[str, Any]], stats: Dict[str, Dict[str, Dict[str, Any]]],
                          metrics: Sequence[str] = PAIRWISE_METRICS) -> Dict[str, List[Tuple[str, str, Any]]]:
    """For each metric, every pair of test cases (baseline excluded) with its paired bootstrap difference."""
    out: Dict[str, List[Tuple[str, str, Any]]] = {}
    labels = [s["label"] for s in summaries if s["method"] != BASELINE]
    for name in metrics:
        pairs = []
        for i, a in enumerate(labels):
            for b in labels[i + 1:]:
                va, vb = stats.get(a, {}).get(name), stats.get(b, {}).get(name)
                if va and vb:
                    pairs.append((a, b, paired_difference(*_aligned(va, vb))))
        out[name] = pairs
    return out


def _pairwise_section(summaries: List[Dict[str, Any]], stats: Dict[str, Dict[str, Dict[str, Any]]]) -> List[str]:
    table = pairwise_significance(summaries, stats)
    if not any(table.values()):
        return []
    out = ["## Which differences between test cases are significant", "",
           "Paired bootstrap on the samples both test cases have (95%, no correction for multiple comparisons: "
           "among k pairs about 5% of k look significant by chance alone). Only significant pairs are listed.", ""]
    for name, pairs in table.items():
        if not pairs:
            continue
        sig = [(a, b, d) for a, b, d in pairs if d.significant]
        out.append(f"- **{name}**: {len(sig)} of {len(pairs)} pairs significant"
                   + (":" if sig else "."))
        out += [f"  - {a} − {b}: {d.fmt()}" for a, b, d in sig]
    return out + [""]


def _apr_section(rows: List[Dict]) -> List[str]:
    if not rows:
        return []
    out = ["## Accuracy preservation (APR) against the unprotected baseline", "",
           "Over the samples the `none` baseline answered through the cloud path and this test case also "
           "routed there. Similarity: cosine (all-MiniLM-L6-v2) of the final answer to the baseline's answer. "
           "Judge: the local LLM's 1-10 score of each answer to the unprotected request; APR (judge) = mean with "
           "privacy / mean without. **A sample this test case failed on counts as zero quality** (similarity 0, "
           "judge 0). A 0.5B judge is a coarse signal.", "",
           "| test case | n | failed | APR (similarity) [95% CI] | judge with | judge without | APR (judge) [95% CI] |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        sim = bootstrap_ci(r["similarities"]).fmt()
        jud = bootstrap_ci([p for p in r["judge_pairs"] if p]).fmt()
        out.append(f"| {r['label']} | {r['n']} | {r['n_failed']} | {sim} | {_fmt(r['judge_with'], 2)} | "
                   f"{_fmt(r['judge_without'], 2)} | {jud} |")
    return out + [""]


def _csv_est(prefix: str, e: Optional[Estimate]) -> Dict[str, Any]:
    if e is None:
        return {prefix: "", f"{prefix}_ci_low": "", f"{prefix}_ci_high": "", f"{prefix}_n": ""}
    r = lambda x: "" if math.isnan(x) else round(x, 6)  # noqa: E731
    return {prefix: r(e.value), f"{prefix}_ci_low": r(e.low), f"{prefix}_ci_high": r(e.high), f"{prefix}_n": e.n}


def write_leaderboard_csv(path: str, summaries: List[Dict[str, Any]], cases: List[Dict[str, Any]],
                          randomness: Sequence[str], sort_by: Any = None,
                          pareto: Optional[Dict[str, Any]] = None) -> None:
    """Compact CSV: the deciding columns first, then every per-sample metric with its interval, then the
    remaining all_rank columns of the test case."""
    from ..metrics.catalog import per_sample_metrics

    rows: List[Dict[str, Any]] = []
    for i, (s, c) in enumerate(zip(summaries, cases), 1):
        row: Dict[str, Any] = {"position": i, "test_case": s["label"], "method": s["method"], "epsilon": s["epsilon"],
                               "epsilon_note": s["epsilon_note"], **{f"route_{r}": s["routes"][r] for r in ROUTES},
                               "n_completed": s["n_completed"], "n_failed": s["n_failed"],
                               "cache_replays": "" if s.get("replayed") is None or s["replayed"] != s["replayed"]
                               else int(s["replayed"])}
        dom = (pareto or {}).get("dominated", {}).get(s["label"])
        row["pareto"] = "" if dom is None else ("front" if not dom else "dominated")
        for key in lead_columns(summaries, sort_by):
            row.update(_csv_est(key, s["est"].get(key)))
        for key in [m.name for m in per_sample_metrics()] + ["apr_judge"] + list(s["est"]):
            if key not in row:
                row.update(_csv_est(key, s["est"].get(key)))
        m = s.get("machine") or {}
        row.update({"machine_loadavg_1_5_15": " ".join(map(str, m.get("loadavg_1_5_15") or [])),
                    "machine_usable_cores": machine_state.usable_cores(m) if m else "",
                    "machine_pinned": m.get("pinned", "")})
        row["randomness"] = " | ".join(randomness)
        row.update({f"all_rank:{k}": v for k, v in c["row"].items()})
        rows.append(row)
    header: List[str] = []
    for r in rows:
        header += [k for k in r if k not in header]
    tmp = path + ".tmp"
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=header, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp, path)


def _order(cases: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """all_rank order, test cases that completed nothing last."""
    def answered_nothing(c: Dict[str, Any]) -> bool:
        return bool(c["preds"]) and all(_status(p) != "ok" for p in c["preds"])

    return [c for c in cases if not answered_nothing(c)] + [c for c in cases if answered_nothing(c)]


TAB_GOLD_METRICS = ("pdr", "sels", "er_di", "er_qi", "token_precision", "iar_trir")


def job_sort_by(config_path: Optional[str]) -> Any:
    """``rank.sort_by`` of the job's YAML ([] without a readable config)."""
    if not config_path or not os.path.isfile(config_path):
        return []
    import yaml

    try:
        with open(config_path, encoding="utf-8") as fh:
            job = (yaml.safe_load(fh) or {}).get("benchmarkingjob") or {}
    except (OSError, yaml.YAMLError):
        return []
    return ((job.get("rank") or {}).get("sort_by")) or []


def _replay_note(summaries: List[Dict[str, Any]]) -> List[str]:
    """A warning line when answers were replayed from the response cache."""
    total = sum(int(s["replayed"]) for s in summaries if s.get("replayed") == s.get("replayed") and s.get("replayed"))
    n = sum(s["n"] for s in summaries)
    if not total:
        return []
    return [f"**Cache replays: {total} of {n} answers were replayed from the response cache** (no model ran and "
            "nothing was sent for them in this run; a failing cloud would not show). They are counted per test case "
            "below and left out of every latency figure; `run --no-cache` refuses them.", ""]


def write_report(output_dir: str, config_path: Optional[str] = None, data_file: Optional[str] = None,
                 judge: bool = True, embeddings: bool = True) -> str:
    """Write ``<output_dir>/report.md`` and ``<output_dir>/rank/leaderboard.csv``; returns the report's path.

    ``judge=False`` skips the LLM-judge half of APR (it calls the local model once per cloud answer);
    ``embeddings=False`` skips everything that needs MiniLM (CPP intervals, APR similarity)."""
    from .report_plots import load_cases, make_plots

    cases = _order(load_cases(output_dir))
    lines = ["# Benchmark report", ""]
    labels = randomness_labels(cases)
    lines += ["**Randomness:** " + ("; ".join(labels) if labels else "not recorded in the results"), ""]
    gold = load_gold(data_file)
    apr: List[Dict] = []
    try:
        from ..metrics.apr import apr_rows

        if embeddings:
            apr = apr_rows(cases, judge=None if judge else (lambda request, answer: float("nan")))
        else:
            lines += ["(APR not computed: embeddings disabled)", ""]
    except Exception as exc:  # noqa: BLE001 - the leaderboard must survive a missing embedding or judge model
        lines += [f"(APR not computed: {type(exc).__name__}: {exc})", ""]
    attacker = None
    if gold:
        try:
            from ..metrics.trir import load_or_train_attacker

            attacker = load_or_train_attacker()
        except (FileNotFoundError, ValueError) as exc:
            print(f"report: TRIR not computed: {exc}", file=sys.stderr)
    stats = {c["label"]: case_stats(c, gold, attacker, embeddings) for c in cases} if gold else {}
    apr_by = {r["label"]: r for r in apr}
    for label, r in apr_by.items():  # APR per sample, for the paired comparisons between test cases
        if label in stats:
            stats[label]["apr_similarity"] = dict(zip(r["doc_ids"], r["similarities"]))
    summaries = [_summary(c, stats.get(c["label"], {}), apr_by.get(c["label"])) for c in cases]
    sort_by = job_sort_by(config_path)
    metric_names = metric_columns(cases[0]["row"]) if cases else []
    pareto = pareto_view(summaries, metric_names)
    if cases:
        lines += _replay_note(summaries) + _leaderboard(summaries, sort_by, pareto) + _columns_section(metric_names, sort_by)
        rank_dir = os.path.join(output_dir, "rank")
        if os.path.isdir(rank_dir):
            write_leaderboard_csv(os.path.join(rank_dir, "leaderboard.csv"), summaries, cases, labels, sort_by, pareto)
        from .report_html import write_html

        write_html(os.path.join(output_dir, "leaderboard.html"), summaries, cases, lead_columns(summaries, sort_by),
                   metric_names, sort_by, pareto, labels, DIGITS)
        if stats or any(m in metric_names for m in TAB_GOLD_METRICS):
            lines += _metric_sections(summaries, stats)
        lines += _apr_section(apr) + _pairwise_section(summaries, stats) + machine_state.section(cases, metric_names)
    try:
        plots = make_plots(output_dir, apr, cases)
    except Exception as exc:  # a plot must never hide the leaderboard
        plots, lines = [], lines + [f"(plots not drawn: {type(exc).__name__}: {exc})", ""]
    if plots:
        lines += ["## Plots", ""] + [f"![{p[:-4]}]({p})" for p in plots] + [""]
    fail = os.path.join(output_dir, "failures.json")
    if os.path.isfile(fail):
        with open(fail, encoding="utf-8") as fh:
            failures = json.load(fh)
        cases_failed = [f for f in failures if "error" in f]
        samples_failed = [f for f in failures if "failed_samples" in f]
        if cases_failed:
            lines += ["## Failed test cases", ""] + [f"- {f['test_case']}: `{f['error']}`" for f in cases_failed] + [""]
        if samples_failed:
            lines += ["## Test cases with failed samples", ""] + [
                f"- {f['test_case']}: {f['failed_samples']}/{f['samples']} samples failed "
                f"({', '.join(f'{k}: {v}' for k, v in f['statuses'].items())})" for f in samples_failed] + [""]
    lines += ["## Provenance", ""]
    if config_path and os.path.isfile(config_path):
        files = _config_files(config_path)
        lines += [f"- config hash: `{stable_hash(files)[:16]}`"] + [f"- `{p}`: sha256 `{h[:16]}`" for p, h in files.items()]
    if data_file and os.path.isfile(data_file):
        lines.append(f"- test data: `{data_file}` (sha256 `{sha256_file(data_file)[:16]}`)")
    lines += [f"- model `{k}`: sha256 `{m.sha256}`" for k, m in MODELS.items()]
    path = os.path.join(output_dir, "report.md")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    return path



def console_board(output_dir: str, config_path: Optional[str] = None) -> str:
    """The short table ``run`` prints (rows named by what differs, sort keys first, replays, Pareto flags)."""
    from .leaderboard import console_table
    from .report_plots import load_cases

    cases = _order(load_cases(output_dir))
    if not cases:
        return "(no test case finished)"
    sort_by = job_sort_by(config_path)
    names = metric_columns(cases[0]["row"])
    summaries = [_summary(c, {}, None) for c in cases]
    dominated = {k for k, v in pareto_view(summaries, names)["dominated"].items() if v}
    return ("leaderboard (" + describe_rule(sort_by) + "; full table in rank/leaderboard.csv):\n"
            + console_table(cases, sort_by, names, dominated=dominated))
