"""PRISM's Table 1 (and its Figure 4 ε sweep) run prompt by prompt over the test cases of a benchmarking job.

``run``: every test case of the job answers one prompt before the next prompt starts (prompts taken round-robin
over the domains), and each (prompt, test case) result is appended to a JSONL checkpoint at once, so an
interrupted run keeps what it finished, a rerun resumes, and a partial run stays balanced over methods and
domains.  The modules, their hyperparameters and the call semantics are the job's own (the same module files
Ianvs loads; :class:`JointInference` with the testenv's mining mode).

``summarize``: the table in the paper's layout from the checkpoint, with 95% bootstrap intervals: completion
time, edge energy, quality (a) MiniLM similarity to the Cloud-only answer on the unprotected prompt,
(b) the judge's score with two judge prompts and their agreement, leaks of gold DIRECT identifiers in the
recorded traffic, routes; per domain; latency ratios.  See ``python -m cloud_edge_privacy.bench.prism_bench -h``.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import os
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from ..core.context import CONTEXTS
from ..errors import ConfigError
from .ianvs_config import Algorithm, BenchmarkJob, load_benchmarking_job
from ..metrics.edge_energy import sample_energy_j, sample_wall_s
from ..metrics.performance import sample_route
from ..metrics.privacy import leak_direct_count
from ..metrics.samples import SampleView
from ..metrics.stats import Estimate, bootstrap_ci

CLOUD_ONLY = "cloud-only"


# -- running -----------------------------------------------------------------------------------------------

@dataclass
class Case:
    """One test case of the job, built once and kept for every prompt."""

    label: str
    algo: Algorithm
    out_dir: str
    joint: Any
    instances: List[Any]


def case_label(algo: Algorithm, algos: Sequence[Algorithm]) -> str:
    """The algorithm's name, plus the hyperparameters that tell its test cases apart (e.g. ``prism eps=0.1``)."""
    same = [a for a in algos if a.name == algo.name]
    cols = [a.hyperparameter_columns() for a in same]
    mine = algo.hyperparameter_columns()
    varying = [k for k in mine if len({str(c.get(k)) for c in cols}) > 1]
    return " ".join([algo.name] + [f"{k.split('-', 1)[1]}={mine[k]}" for k in varying])


def build_cases(job: BenchmarkJob) -> List[Case]:
    from .joint_inference import JointInference
    from .module_loader import import_module_file
    from .runner import _build, module_class, validate_job

    validate_job(job)
    cases = []
    for algo in job.algorithms:
        out_dir = os.path.join(job.output_dir, algo.name)
        os.makedirs(out_dir, exist_ok=True)
        os.environ["RESULT_SAVED_URL"] = out_dir
        for pkg in algo.third_party_packages:
            import_module_file(pkg["url"])
        inst = {t: _build(s) for t, s in algo.modules.items() if t != "hard_example_mining"}
        hem_spec = algo.modules["hard_example_mining"]
        if hem_spec.url:
            import_module_file(hem_spec.url)
        hem = module_class(hem_spec)(**hem_spec.hyperparameters)
        joint = JointInference(inst["edgemodel"], inst["cloudmodel"], hem)
        cases.append(Case(case_label(algo, job.algorithms), algo, out_dir, joint, list(inst.values()) + [hem]))
    return cases


WARM_UP = {"doc_id": "warm-up", "instruction": "Answer the user's request helpfully and concisely.",
           "text": "I am Anna Berg from Oslo and my card 4111 1111 1111 1111 was charged twice. What should I do?"}


def warm_up(cases: List[Case], mode: str, progress: bool = True) -> None:
    """One untimed, unrecorded request per case first: the local cloud server starts, models and word vectors
    load, so that no measured prompt pays for loading."""
    t0 = time.time()
    for case in cases:
        os.environ["RESULT_SAVED_URL"] = case.out_dir
        try:
            case.joint.inference(dict(WARM_UP), mining_mode=mode)
        except Exception as exc:  # noqa: BLE001 - the measured run reports real failures itself
            print(f"warm-up of {case.label} failed: {type(exc).__name__}", file=sys.stderr)
    if progress:
        print(f"warm-up of {len(cases)} test cases: {time.time() - t0:.0f} s (not recorded)", file=sys.stderr)


def read_data(path: str) -> List[Dict[str, Any]]:
    from ..datasets.tab import read_ianvs_jsonl

    return read_ianvs_jsonl(path)


def round_robin(records: List[Dict[str, Any]], per_domain: Optional[int] = None) -> List[Dict[str, Any]]:
    """Records ordered domain by domain in turn (first of each domain, then second ...), at most
    ``per_domain`` per domain: any prefix of the run is balanced over domains."""
    by_dom: Dict[str, List[Dict[str, Any]]] = defaultdict(list)
    for r in records:
        by_dom[str(r["answer"].get("domain", ""))].append(r)
    if per_domain is not None:
        by_dom = {d: v[:per_domain] for d, v in by_dom.items()}
    out, i = [], 0
    while any(i < len(v) for v in by_dom.values()):
        out += [v[i] for _, v in sorted(by_dom.items()) if i < len(v)]
        i += 1
    return out


def done_keys(path: Path) -> set:
    if not path.is_file():
        return set()
    keys = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            try:
                r = json.loads(line)
            except json.JSONDecodeError:  # a line cut by an interruption: that pair is run again
                continue
            keys.add((r["doc_id"], r["case"]))
    return keys


def run(job_path: str, out: Path, data_file: Optional[str] = None, per_domain: Optional[int] = None,
        progress: bool = True) -> int:
    """Run every (prompt, test case) pair not yet in ``out``; returns the number run now."""
    job = load_benchmarking_job(job_path)
    data_file = data_file or job.testenv.test_data
    records = round_robin(read_data(data_file), per_domain)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = done_keys(out)
    cases = build_cases(job)
    todo = [(r, c) for r in records for c in cases if (r["question"]["doc_id"], c.label) not in done]
    mode = job.testenv.mining_mode
    if todo:
        warm_up(cases, mode, progress)
    t_start = time.time()
    with open(out, "a", encoding="utf-8") as fh:
        for k, (rec, case) in enumerate(todo, 1):
            x = rec["question"]
            os.environ["RESULT_SAVED_URL"] = case.out_dir
            t0 = time.perf_counter()
            try:
                pred = case.joint.inference(x, mining_mode=mode)
            except Exception as exc:  # noqa: BLE001 - one sample's failure is one sample's failure
                from .runner import _failed_sample

                pred = _failed_sample(x, exc)
            row = {"doc_id": x["doc_id"], "domain": rec["answer"].get("domain", ""), "case": case.label,
                   "algorithm": case.algo.name, "hyperparameters": case.algo.hyperparameter_columns(),
                   "driver_wall_s": round(time.perf_counter() - t0, 4), "pred": pred}
            fh.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
            if progress:
                el = time.time() - t_start
                print(f"[{k}/{len(todo)}] {x['doc_id']} {case.label}: route {sample_route(view(row))} "
                      f"status {view(row).status} {row['driver_wall_s']:.1f}s (elapsed {el / 60:.1f} min, "
                      f"eta {el / k * (len(todo) - k) / 60:.1f} min)", file=sys.stderr, flush=True)
    for case in cases:
        for inst in case.instances:
            if hasattr(inst, "cleanup"):
                inst.cleanup()
    return len(todo)


# -- summarizing -------------------------------------------------------------------------------------------

def view(row: Dict[str, Any], gold: Optional[Dict[str, Any]] = None) -> SampleView:
    hard, res, edge, cloud = row["pred"]
    return SampleView(gold or {}, bool(hard), res, edge, cloud)


def load_rows(path: Path) -> List[Dict[str, Any]]:
    rows, seen = [], set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            continue
        key = (r["doc_id"], r["case"])
        if key not in seen:
            seen.add(key)
            rows.append(r)
    return rows


def answer_of(v: SampleView) -> str:
    return str(v.result.answer or "") if v.completed and v.result is not None else ""


@dataclass
class SampleRow:
    """The per-sample figures of one (prompt, test case)."""

    doc_id: str
    domain: str
    case: str
    route: str
    status: str
    wall_s: Optional[float]
    energy_j: Optional[float]
    energy_method: str
    cpu_s: Optional[float]
    leaks: int
    went_to_cloud: bool
    answer: str
    request: str
    similarity: Optional[float] = None
    judge_a: Optional[float] = None
    judge_b: Optional[float] = None


def sample_rows(rows: List[Dict[str, Any]], gold: Dict[str, Dict[str, Any]]) -> List[SampleRow]:
    out = []
    for r in rows:
        g = gold.get(r["doc_id"], {})
        v = view(r, g)
        e = v.field("energy") or {}
        out.append(SampleRow(r["doc_id"], r.get("domain", ""), r["case"], sample_route(v), v.status,
                             sample_wall_s(v), sample_energy_j(v), str(e.get("method", "")),
                             e.get("cpu_s") if v.completed else None, leak_direct_count(v), v.went_to_cloud,
                             answer_of(v), str(g.get("text", ""))))
    return out


def add_similarity(samples: List[SampleRow], reference_case: str = CLOUD_ONLY,
                   embed: Optional[Callable[[List[str]], Any]] = None,
                   reference: Optional[Dict[str, str]] = None) -> None:
    """Quality (a): cosine (MiniLM) of each answer with the reference case's answer to the same prompt (or with
    ``reference[doc_id]``); a failed sample scores 0; nothing where the reference has no answer."""
    ref = reference if reference is not None else {s.doc_id: s.answer for s in samples
                                                   if s.case == reference_case and s.answer}
    if embed is None:
        from ..metrics.semantic import _model

        def embed(texts: List[str]) -> Any:
            return _model().encode(texts, normalize_embeddings=True, batch_size=16)

    todo = [s for s in samples if s.doc_id in ref]
    with_answer = [s for s in todo if s.answer]
    if with_answer:
        vecs = embed([t for s in with_answer for t in (ref[s.doc_id], s.answer)])
        for k, s in enumerate(with_answer):
            s.similarity = float(vecs[2 * k] @ vecs[2 * k + 1])
    for s in todo:
        if not s.answer:
            s.similarity = 0.0


def add_judge(samples: List[SampleRow], judge: Any, prompts: Sequence[str] = ("a", "b"), progress: bool = True) -> None:
    """Quality (b): judge scores with each judge prompt; a failed sample scores 0, an unparsable reply is NaN."""
    from ..metrics.judge import judge_score

    t0 = time.time()
    for k, s in enumerate(samples, 1):
        for p in prompts:
            score = 0.0 if not s.answer else judge_score(s.request, s.answer, judge, prompt=p)
            setattr(s, f"judge_{p}", score)
        if progress and (k % 20 == 0 or k == len(samples)):
            print(f"judge {k}/{len(samples)} ({(time.time() - t0) / 60:.1f} min)", file=sys.stderr, flush=True)


def ratio_ci(a: Sequence[float], b: Sequence[float], n_resamples: int = 2000, seed: int = 20240) -> Estimate:
    """mean(a) / mean(b) on paired samples, with a paired percentile-bootstrap interval."""
    import numpy as np

    pa, pb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    n = len(pa)
    if n == 0 or pb.mean() == 0:
        return Estimate(math.nan, math.nan, math.nan, n)
    point = float(pa.mean() / pb.mean())
    if n < 2:
        return Estimate(point, math.nan, math.nan, n)
    idx = np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))
    r = pa[idx].mean(axis=1) / pb[idx].mean(axis=1)
    lo, hi = np.quantile(r, [0.025, 0.975])
    return Estimate(point, float(lo), float(hi), n)


def _vals(samples: Iterable[SampleRow], attr: str) -> List[float]:
    return [float(getattr(s, attr)) for s in samples if getattr(s, attr) is not None
            and not (isinstance(getattr(s, attr), float) and math.isnan(getattr(s, attr)))]


def case_stats(samples: List[SampleRow]) -> Dict[str, Any]:
    routes = [s.route for s in samples]
    n = len(samples)
    return {
        "n": n,
        "n_completed": sum(s.status == "ok" for s in samples),
        "completion_time_s": bootstrap_ci(_vals(samples, "wall_s")),
        "edge_energy_j": bootstrap_ci(_vals(samples, "energy_j")),
        "cpu_s": bootstrap_ci(_vals(samples, "cpu_s")),
        "similarity_to_cloud_only": bootstrap_ci(_vals(samples, "similarity")),
        "judge_a": bootstrap_ci(_vals(samples, "judge_a")),
        "judge_b": bootstrap_ci(_vals(samples, "judge_b")),
        "leak_direct": sum(s.leaks for s in samples),
        "prompts_with_leak": sum(s.leaks > 0 for s in samples),
        "sent_to_cloud": sum(s.went_to_cloud for s in samples),
        "routes": {r: round(routes.count(r) / n, 3) for r in ("edge", "collaborative", "cloud")} if n else {},
        "energy_method": sorted({s.energy_method for s in samples if s.energy_method}),
    }


def _fmt(e: Any, nd: int = 2) -> str:
    if not isinstance(e, Estimate) or e.n == 0 or math.isnan(e.value):
        return "n/a"
    if math.isnan(e.low):
        return f"{e.value:.{nd}f}"
    return f"{e.value:.{nd}f} [{e.low:.{nd}f}, {e.high:.{nd}f}]"


def paired(samples: List[SampleRow], case_a: str, case_b: str, attr: str = "wall_s") -> Tuple[List[float], List[float]]:
    """Values of ``attr`` for the prompts both cases completed, in the same order."""
    a = {s.doc_id: getattr(s, attr) for s in samples if s.case == case_a and getattr(s, attr) is not None}
    b = {s.doc_id: getattr(s, attr) for s in samples if s.case == case_b and getattr(s, attr) is not None}
    keys = sorted(set(a) & set(b))
    return [a[k] for k in keys], [b[k] for k in keys]


def to_jsonable(obj: Any) -> Any:
    if isinstance(obj, Estimate):
        return {"value": obj.value, "ci95": [obj.low, obj.high], "n": obj.n}
    if isinstance(obj, dict):
        return {k: to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, float) and math.isnan(obj):
        return None
    return obj


def write_per_sample(samples: List[SampleRow], path: Path) -> None:
    cols = ["doc_id", "domain", "case", "route", "status", "wall_s", "energy_j", "cpu_s", "leaks", "similarity",
            "judge_a", "judge_b", "answer"]
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(cols)
        for s in samples:
            w.writerow([("" if getattr(s, c) is None else round(getattr(s, c), 4)
                         if isinstance(getattr(s, c), float) else getattr(s, c)) for c in cols])


def summarize(checkpoint: Path, out_dir: Path, data_file: str, judge: Optional[Any] = None,
              judge_prompts: Sequence[str] = ("a", "b"), reference_case: str = CLOUD_ONLY,
              progress: bool = True, title: str = "PRISM Table 1",
              reference_checkpoint: Optional[Path] = None) -> Dict[str, Any]:
    """Figures of every test case in the checkpoint; writes ``summary.json``, ``per_sample.csv`` and a markdown
    table (``table.md``) into ``out_dir``.  ``reference_checkpoint``: take the reference case's answers for
    quality (a) from another run (the eps sweep has no Cloud-only case of its own)."""
    from ..metrics.judge import judge_reliability

    gold = {r["answer"]["doc_id"]: r["answer"] for r in read_data(data_file)}
    rows = load_rows(checkpoint)
    if not rows:
        raise ConfigError(f"{checkpoint}: no results to summarize")
    samples = sample_rows(rows, gold)
    cases = list(dict.fromkeys(s.case for s in samples))
    # only prompts every case has finished, so that all cases are compared on the same prompts
    per_case = defaultdict(set)
    for s in samples:
        per_case[s.case].add(s.doc_id)
    common = set.intersection(*per_case.values())
    samples = [s for s in samples if s.doc_id in common]
    if reference_checkpoint is not None:
        ref_rows = [r for r in load_rows(reference_checkpoint) if r["case"] == reference_case]
        add_similarity(samples, reference_case,
                       reference={s.doc_id: s.answer for s in sample_rows(ref_rows, gold) if s.answer})
    elif reference_case in cases:
        add_similarity(samples, reference_case)
    if judge is not None:
        add_judge(samples, judge, judge_prompts, progress)
    stats = {c: case_stats([s for s in samples if s.case == c]) for c in cases}
    domains = sorted({s.domain for s in samples})
    per_domain = {c: {d: case_stats([s for s in samples if s.case == c and s.domain == d]) for d in domains}
                  for c in cases}
    ratios = {}
    prism_cases = [c for c in cases if c.startswith("prism")]
    for pc in prism_cases:
        for other in cases:
            if other != pc:
                a, b = paired(samples, pc, other)
                ratios[f"{pc} / {other}"] = ratio_ci(a, b)
                ratios[f"{other} / {pc}"] = ratio_ci(b, a)
    reliability = None
    if judge is not None and len(judge_prompts) == 2:
        judged = [s for s in samples if s.answer]
        reliability = judge_reliability([s.judge_a for s in judged], [s.judge_b for s in judged],
                                        [s.case for s in judged]).to_dict()
    out_dir.mkdir(parents=True, exist_ok=True)
    summary = {"title": title, "prompts": len(common), "cases": cases, "domains": domains, "stats": stats,
               "per_domain": per_domain, "latency_ratios": ratios, "judge": getattr(judge, "name", None),
               "judge_reliability": reliability, "reference_case": reference_case,
               "energy_methods": sorted({s.energy_method for s in samples if s.energy_method})}
    (out_dir / "summary.json").write_text(json.dumps(to_jsonable(summary), indent=1) + "\n", encoding="utf-8")
    write_per_sample(samples, out_dir / "per_sample.csv")
    (out_dir / "table.md").write_text(render_markdown(summary), encoding="utf-8")
    return summary


def render_markdown(s: Dict[str, Any]) -> str:
    st = s["stats"]
    lines = [f"# {s['title']}: {s['prompts']} prompts x {len(s['cases'])} test cases", "",
             "Means with 95% percentile-bootstrap intervals over prompts. Completion time and edge energy over "
             "completed prompts; quality (a) = MiniLM cosine of the answer with the Cloud-only answer to the "
             "unprotected prompt (failed = 0); quality (b) = judge score 1-10 (failed = 0) with two judge prompts; "
             "leaks = gold DIRECT identifiers found verbatim in the recorded cloud traffic.", "",
             f"Judge: {s.get('judge') or 'not run'}. Energy: {'; '.join(s['energy_methods']) or 'n/a'}.", "",
             "| method | completion time (s) | edge energy (J) | edge CPU (s) | quality (a) sim. to cloud-only | "
             "quality (b) judge A | judge B | leaks (prompts) | edge / collab. / cloud | n ok / n |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for c in s["cases"]:
        x = st[c]
        r = x["routes"]
        lines.append(f"| {c} | {_fmt(x['completion_time_s'])} | {_fmt(x['edge_energy_j'], 1)} | {_fmt(x['cpu_s'])} | "
                     f"{_fmt(x['similarity_to_cloud_only'], 3)} | {_fmt(x['judge_a'])} | {_fmt(x['judge_b'])} | "
                     f"{x['leak_direct']} ({x['prompts_with_leak']}) | {r.get('edge', 0):.2f} / "
                     f"{r.get('collaborative', 0):.2f} / {r.get('cloud', 0):.2f} | {x['n_completed']} / {x['n']} |")
    if s["latency_ratios"]:
        lines += ["", "## Completion-time ratios (paired prompts, mean / mean, 95% bootstrap interval)", "",
                  "| ratio | value |", "|---|---|"]
        lines += [f"| {k} | {_fmt(v)} |" for k, v in s["latency_ratios"].items()]
    if s.get("judge_reliability"):
        j = s["judge_reliability"]
        lines += ["", "## Judge reliability (prompt A vs prompt B on the same answers)", "",
                  f"n = {j['n']} answers; Spearman {j['spearman']:.3f}; same score {j['exact']:.1%}; within 1 point "
                  f"{j['within_one']:.1%}; mean |A - B| {j['mean_abs_diff']:.2f}; SD of A scores {j['sd_a']:.2f}; "
                  f"range of per-method means: A {j['method_range_a']:.2f}, B {j['method_range_b']:.2f}."]
    lines += ["", "## Per domain", "",
              "| domain | method | completion time (s) | edge energy (J) | sim. to cloud-only | judge A | leaks | "
              "edge / collab. / cloud | n |", "|---|---|---|---|---|---|---|---|---|"]
    for d in s["domains"]:
        for c in s["cases"]:
            x = s["per_domain"][c][d]
            r = x["routes"]
            lines.append(f"| {d} | {c} | {_fmt(x['completion_time_s'])} | {_fmt(x['edge_energy_j'], 1)} | "
                         f"{_fmt(x['similarity_to_cloud_only'], 3)} | {_fmt(x['judge_a'])} | {x['leak_direct']} | "
                         f"{r.get('edge', 0):.2f} / {r.get('collaborative', 0):.2f} / {r.get('cloud', 0):.2f} | "
                         f"{x['n']} |")
    return "\n".join(lines) + "\n"


def leak_audit(job_path: str, data_file: Optional[str] = None, out_dir: Optional[Path] = None,
               progress: bool = True) -> Dict[str, Any]:
    """What each test case would send for every prompt, without any LLM: the job's router decides, the cloud
    module's pipeline protects the prompt and builds the request it would send (the same code path, stopped
    before the HTTP call), and the egress guard checks it.  Leaks are gold DIRECT identifiers found verbatim in
    that request.  Cheap enough for all prompts and every eps of the sweep."""
    from ..models.collaboration import sketch_messages
    from ..core.context import sample_key
    from ..models.llama_edge import build_messages
    from .module_loader import import_module_file
    from ..core.pipeline import EdgePipeline, outgoing_texts
    from .runner import module_class, validate_job

    job = load_benchmarking_job(job_path)
    validate_job(job)
    data_file = data_file or job.testenv.test_data
    records = read_data(data_file)
    rows: List[Dict[str, Any]] = []
    for algo in job.algorithms:
        label = case_label(algo, job.algorithms)
        out = os.path.join(job.output_dir, "leak_audit", algo.name)
        os.environ["RESULT_SAVED_URL"] = out
        ctx = CONTEXTS.get(out)
        for pkg in algo.third_party_packages:
            import_module_file(pkg["url"])
        cloud_spec, hem_spec = algo.modules["cloudmodel"], algo.modules["hard_example_mining"]
        for spec in (cloud_spec, hem_spec):
            if spec.url:
                import_module_file(spec.url)
        cfg = module_class(cloud_spec).Config.model_validate(cloud_spec.hyperparameters)
        pipe = EdgePipeline(ctx, cfg)
        hem = module_class(hem_spec)(**hem_spec.hyperparameters)
        t0 = time.time()
        for rec in records:
            x, gold = rec["question"], rec["answer"]
            hard = bool(hem(x))
            decision = ctx.decision(sample_key(x)) if hard else None
            route = (decision.route.value if decision else "cloud") if hard else "edge"
            row = {"doc_id": x["doc_id"], "domain": gold.get("domain", ""), "case": label, "route": route,
                   "sent": False, "blocked": False, "leaks": 0, "gold_direct": 0}
            from ..metrics.samples import gold_mentions

            mentions = gold_mentions(gold, ("DIRECT",))
            row["gold_direct"] = len(mentions)
            if route != "edge":
                try:
                    prot = pipe.protect(x)
                    instruction, text = prot.fields
                    msgs = sketch_messages(instruction, text) if route == "collaborative" else build_messages(instruction, text)
                    pipe.guard(prot, msgs)
                    sent = "\n".join(outgoing_texts(msgs))
                    from ..metrics.privacy import appears_in

                    row.update(sent=True, leaks=sum(appears_in(m["span_text"], sent) for m in mentions))
                except Exception:  # noqa: BLE001 - blocked (fail closed): nothing would leave
                    row["blocked"] = True
            rows.append(row)
        if progress:
            print(f"leak audit {label}: {len(records)} prompts, {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    cases = list(dict.fromkeys(r["case"] for r in rows))
    domains = sorted({r["domain"] for r in rows})

    def agg(rs: List[Dict[str, Any]]) -> Dict[str, Any]:
        n = len(rs)
        return {"n": n, "sent": sum(r["sent"] for r in rs), "blocked": sum(r["blocked"] for r in rs),
                "leaks": sum(r["leaks"] for r in rs), "prompts_with_leak": sum(r["leaks"] > 0 for r in rs),
                "gold_direct": sum(r["gold_direct"] for r in rs),
                "routes": {k: round(sum(r["route"] == k for r in rs) / n, 3) for k in ("edge", "collaborative", "cloud")}}

    result = {"prompts": len(records), "cases": cases, "domains": domains,
              "stats": {c: agg([r for r in rows if r["case"] == c]) for c in cases},
              "per_domain": {c: {d: agg([r for r in rows if r["case"] == c and r["domain"] == d]) for d in domains}
                             for c in cases}}
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "leak_audit.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        lines = [f"# Leak audit without LLM calls: {len(records)} prompts", "",
                 "What each test case would send (router decision, protection and egress guard of the real pipeline, "
                 "stopped before the HTTP call); leaks = gold DIRECT identifiers (rule-extracted names and "
                 "card/account numbers) found verbatim in the request.", "",
                 "| test case | sent to cloud | blocked by guard | leaked DIRECT ids / gold | prompts with a leak | "
                 "edge / collab. / cloud |", "|---|---|---|---|---|---|"]
        for c in cases:
            x = result["stats"][c]
            r = x["routes"]
            lines.append(f"| {c} | {x['sent']} | {x['blocked']} | {x['leaks']} / {x['gold_direct']} | "
                         f"{x['prompts_with_leak']} | {r['edge']:.2f} / {r['collaborative']:.2f} / {r['cloud']:.2f} |")
        lines += ["", "## Per domain", "", "| domain | test case | sent | leaked / gold | edge / collab. / cloud |",
                  "|---|---|---|---|---|"]
        for d in domains:
            for c in cases:
                x = result["per_domain"][c][d]
                r = x["routes"]
                lines.append(f"| {d} | {c} | {x['sent']} | {x['leaks']} / {x['gold_direct']} | "
                             f"{r['edge']:.2f} / {r['collaborative']:.2f} / {r['cloud']:.2f} |")
        (out_dir / "leak_audit.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return result


def reproduce(example: Path, workspace: Path, per_domain: Optional[int], sweep_per_domain: int,
              judge: Optional[str] = "local") -> int:
    """Table 1 and the eps sweep of the example, checkpoints under ``workspace``, figures in ``example/results``."""
    from ..metrics.judge import make_judge

    data = str(example / "data" / "prism_prompts.jsonl")
    j = make_judge() if judge else None
    parts = [("benchmarkingjob.yaml", "prism_table1", per_domain, "table1", "PRISM Table 1"),
             ("benchmarkingjob_epsilon.yaml", "prism_epsilon_sweep", sweep_per_domain, "epsilon_sweep",
              "PRISM Figure 4 (eps sweep)")]
    table1 = workspace / "prism_table1" / "checkpoint.jsonl"
    for job, name, n, out, title in parts:
        leak_audit(str(example / job), data, example / "results" / out)
        ck = workspace / name / "checkpoint.jsonl"
        run(str(example / job), ck, data, n)
        summarize(ck, example / "results" / out, data, j, title=title,
                  reference_checkpoint=None if ck == table1 else table1)
    return 0


# -- command line --------------------------------------------------------------------------------------------

def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cloud_edge_privacy.bench.prism_bench", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run the job prompt by prompt into a resumable JSONL checkpoint")
    r.add_argument("-f", "--job", required=True, help="benchmarkingjob.yaml")
    r.add_argument("--out", required=True, help="checkpoint JSONL (appended to; a rerun resumes)")
    r.add_argument("--test-data", default=None, help="Ianvs JSONL (default: the testenv's test_data)")
    r.add_argument("--per-domain", type=int, default=None, help="first N prompts of each domain only")
    s = sub.add_parser("summarize", help="tables with intervals, quality (a)/(b), energy, leaks")
    s.add_argument("--checkpoint", required=True)
    s.add_argument("--results", required=True, help="output folder (summary.json, per_sample.csv, table.md)")
    s.add_argument("--test-data", required=True)
    s.add_argument("--title", default="PRISM Table 1")
    s.add_argument("--reference-case", default=CLOUD_ONLY, help="quality (a) compares answers with this case's")
    s.add_argument("--reference-checkpoint", default=None,
                   help="take the reference case's answers from this checkpoint (e.g. Table 1's, for the eps sweep)")
    s.add_argument("--no-judge", action="store_true", help="skip quality (b)")
    s.add_argument("--judge-base-url", default=None,
                   help="OpenAI-compatible endpoint of a strong judge (default: $CEP_JUDGE_BASE_URL, else the local model)")
    s.add_argument("--judge-model", default=None, help="judge model name at that endpoint ($CEP_JUDGE_MODEL)")
    la = sub.add_parser("leaks", help="leak audit of every test case on every prompt without LLM calls")
    la.add_argument("-f", "--job", required=True)
    la.add_argument("--results", required=True, help="output folder (leak_audit.md, leak_audit.json)")
    la.add_argument("--test-data", default=None)
    a = sub.add_parser("reproduce", help="the example's results/ in one go: Table 1 run + summary, then the eps sweep")
    a.add_argument("--example", default="examples/PRISM/cloud_edge_prism_bench", help="the example folder")
    a.add_argument("--workspace", default="workspace", help="checkpoints go here (a rerun resumes)")
    a.add_argument("--per-domain", type=int, default=None, help="Table 1 on the first N prompts of each domain")
    a.add_argument("--sweep-per-domain", type=int, default=1, help="eps sweep on the first N prompts of each domain")
    a.add_argument("--no-judge", action="store_true")
    args = ap.parse_args(argv)
    if args.cmd == "reproduce":
        return reproduce(Path(args.example), Path(args.workspace), args.per_domain, args.sweep_per_domain,
                         None if args.no_judge else "local")
    if args.cmd == "leaks":
        leak_audit(args.job, args.test_data, Path(args.results))
        print((Path(args.results) / "leak_audit.md").read_text(encoding="utf-8"))
        return 0
    if args.cmd == "run":
        n = run(args.job, Path(args.out), args.test_data, args.per_domain)
        print(f"ran {n} (prompt, test case) pairs into {args.out}")
        return 0
    judge = None
    if not args.no_judge:
        from ..metrics.judge import make_judge

        judge = make_judge(args.judge_base_url, args.judge_model)
    summary = summarize(Path(args.checkpoint), Path(args.results), args.test_data, judge, title=args.title,
                        reference_case=args.reference_case,
                        reference_checkpoint=Path(args.reference_checkpoint) if args.reference_checkpoint else None)
    print((Path(args.results) / "table.md").read_text(encoding="utf-8"))
    return 0 if summary["prompts"] else 1


if __name__ == "__main__":
    sys.exit(main())
