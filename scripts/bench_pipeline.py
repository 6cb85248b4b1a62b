"""End-to-end pipeline figures: the privacy layer's share of the cloud route's latency, samples/min with and
without privacy, latency per route, peak memory.  A benchmark that prints figures (not a test).  Uses the real
models and the local llama.cpp server as the cloud (or the endpoint the environment names).

    .venv/bin/python scripts/bench_pipeline.py [--data data/tab/echr_dev.json] [--n 6] [--method placeholder]
        [--detector default,fast] [--no-edge]
    .venv/bin/python scripts/bench_pipeline.py --profile [--cprofile out.prof] ...   # no LLM: where the time goes

The privacy layer is every stage the unprotected baseline does not run: detection, the operator, the egress
guard and restoration.  Its share is taken from the same run's stage timings of each completed request
(privacy time / the request's total), so machine load weighs on both parts.  Models and tables are loaded and
one extra document (not measured) is sent first, so neither loading nor a cached cold start is counted.
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from cloud_edge_privacy.audit import outgoing_texts  # noqa: E402
from cloud_edge_privacy.core.context import CONTEXTS  # noqa: E402
from cloud_edge_privacy.core.egress import check_egress  # noqa: E402
from cloud_edge_privacy.core.module_configs import CloudModelConfig  # noqa: E402
from cloud_edge_privacy.core.pipeline import EdgePipeline, edge_inference  # noqa: E402
from cloud_edge_privacy.datasets.tab import DEFAULT_INSTRUCTION, load_tab, sample_tab_path  # noqa: E402
from cloud_edge_privacy.metrics.performance import PRIVACY_STAGES, lo_pct, ti_pct  # noqa: E402
from cloud_edge_privacy.metrics.stats import percentile  # noqa: E402
from cloud_edge_privacy.models.llama_edge import build_messages  # noqa: E402
from cloud_edge_privacy.results import SampleResult, Stage, Status  # noqa: E402


def vm_hwm_mb(pid: int) -> float:
    """Peak resident memory of a process (Linux VmHWM), in MB."""
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def load() -> str:
    return "/".join(f"{v:.1f}" for v in os.getloadavg())


def samples(path: str, n: int) -> Tuple[List[Dict[str, str]], Dict[str, str]]:
    """The first ``n`` documents to measure and one more for the warm-up (never measured)."""
    docs = load_tab(path)
    if len(docs) < n + 1:
        raise SystemExit(f"{path}: {len(docs)} documents; --n {n} needs {n + 1} (one warm-up document)")
    xs = [{"doc_id": d.doc_id, "text": d.text, "instruction": DEFAULT_INSTRUCTION} for d in docs[: n + 1]]
    return xs[:n], xs[n]


class TimedDetector:
    """The pipeline's detector, recording each call's seconds per recognizer (for --profile)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name: str = inner.name
        self.timings: Dict[str, float] = {}

    def warm_up(self) -> None:
        self.inner.warm_up()

    def analyze(self, text: str) -> Any:
        return self.analyze_timed(text)[0]

    def analyze_timed(self, text: str) -> Tuple[Any, float]:
        t0 = time.perf_counter()
        spans = self.inner.analyze_many([text], self.timings)[0]
        return spans, (time.perf_counter() - t0) * 1e3


def profile(xs: Sequence[Dict[str, str]], warm: Dict[str, str], args: argparse.Namespace, preset: str) -> None:
    """The privacy path of the cloud route without the LLM: detection per recognizer, the operator, the guard
    per rule, restoration (of the first 600 protected characters, standing in for an answer)."""
    ctx = CONTEXTS.get("workspace/bench_pipeline")
    det = TimedDetector(ctx.detector(preset))
    pipe = EdgePipeline(ctx, CloudModelConfig(privacy_method=args.method, cache=False, detector=preset),
                        detector=det)
    t0 = time.perf_counter()
    pipe.gateway.warm_up()
    check_egress(pipe.protect(warm), pipe.structured)  # builds the guard's own recognizers
    print(f"warm-up (models, tables, guard): {time.perf_counter() - t0:.1f} s; load {load()}")
    det.timings.clear()
    stages: Dict[str, float] = {}
    rules: Dict[str, float] = {}
    blocked = 0
    profiler = None
    if args.cprofile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    for x in xs:
        prot = pipe.protect(x)
        for key in (Stage.DETECTION.value, Stage.DESENSITIZATION.value):
            stages[key] = stages.get(key, 0.0) + prot.timings_ms[key] / 1e3
        t = time.perf_counter()
        findings = check_egress(prot, pipe.structured, outgoing_texts(build_messages(*prot.fields)),
                                randomized_release=pipe.randomized_release,
                                key=pipe.randomness.key, timings=rules)
        stages[Stage.EGRESS_GUARD.value] = stages.get(Stage.EGRESS_GUARD.value, 0.0) + time.perf_counter() - t
        blocked += bool(findings)
        t = time.perf_counter()
        prot.restore(prot.fields[-1][:600])
        stages[Stage.RESTORATION.value] = stages.get(Stage.RESTORATION.value, 0.0) + time.perf_counter() - t
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(args.cprofile)
    total = sum(stages.values())
    chars = sum(len(x["text"]) for x in xs)
    print(f"\n{len(xs)} documents, {chars / len(xs):.0f} characters on average, detector {preset!r}, method "
          f"{args.method!r}; {blocked} blocked by the guard; load {load()}\n")
    print(f"{'stage / part':42s} {'ms per request':>14s} {'share':>7s}")
    rows: List[Tuple[str, float]] = []
    for stage in PRIVACY_STAGES:
        rows.append((stage.value, stages.get(stage.value, 0.0)))
        if stage is Stage.DETECTION:
            rows += [(f"  {k}", v) for k, v in sorted(det.timings.items(), key=lambda kv: -kv[1]) if v > 0]
        if stage is Stage.EGRESS_GUARD:
            names = {"rule1": "identifiers in clear", "rule2": "kept in replacements",
                     "rule3": "structured re-scan", "rule4": "independent check (names, learned)"}
            rows += [(f"  {k} {names.get(k, '')}", v) for k, v in rules.items()]
    for name, secs in rows:
        print(f"{name:42s} {1e3 * secs / len(xs):14.1f} {100 * secs / total:6.1f}%")
    print(f"{'privacy layer':42s} {1e3 * total / len(xs):14.1f} {100.0:6.1f}%")
    if args.cprofile:
        import pstats

        print(f"\ncProfile written to {args.cprofile}; top functions by cumulative time:")
        pstats.Stats(args.cprofile).sort_stats("cumulative").print_stats(25)


def run(cloud: EdgePipeline, xs: Sequence[Dict[str, str]], label: str) -> Tuple[float, List[SampleResult]]:
    """Send every sample through one pipeline; prints and returns samples/min and the results."""
    lat, results = [], []
    t0 = time.perf_counter()
    for x in xs:
        t = time.perf_counter()
        results.append(cloud.cloud(x))
        lat.append(time.perf_counter() - t)
    rate = len(xs) / (time.perf_counter() - t0) * 60
    failed = [f"{r.sample_id}: {r.status.value}" for r in results if r.status != Status.OK]
    print(f"cloud route, {label:22s}: {rate:.2f} samples/min, p50 {percentile(lat, .5):.1f} s, p95 "
          f"{percentile(lat, .95):.1f} s; {len(xs) - len(failed)}/{len(xs)} completed"
          + (f" ({'; '.join(failed)})" if failed else "") + f"; load {load()}", flush=True)
    return rate, results


def report(label: str, results: Sequence[SampleResult], base_rate: float, rate: float) -> None:
    """The privacy layer's share of the same run's stage timings of the completed requests."""
    done = [r for r in results if r.status == Status.OK and not r.cloud_cache_hit]
    n = len(done)
    per_stage = {s.value: sum(r.timings_ms.get(s.value, 0.0) for r in done) / max(n, 1)
                 for s in (*PRIVACY_STAGES, Stage.CLOUD_CALL)}
    privacy = sum(per_stage[s.value] for s in PRIVACY_STAGES)
    total = sum(sum(r.timings_ms.values()) for r in done) / max(n, 1)
    y_pred = [[True, r, None, r] for r in results]
    share, overhead = ti_pct([{}] * len(y_pred), y_pred), lo_pct([{}] * len(y_pred), y_pred)
    print(f"\n{label}, means over the {n} completed requests: "
          + ", ".join(f"{k} {v:.0f} ms" for k, v in per_stage.items()))
    print(f"  privacy share of end-to-end latency (ti_pct): {share:.2f} % ({privacy:.0f} ms of {total:.0f} ms per "
          f"request, n = {n}); latency overhead over the same path without it (lo_pct): {overhead:.2f} %")
    print(f"  throughput lost against the baseline run: {100 * (base_rate - rate) / base_rate:.1f} % (noisy: the "
          f"answers differ in length)")


def bench(xs: Sequence[Dict[str, str]], warm: Dict[str, str], args: argparse.Namespace) -> None:
    """The unprotected baseline once, then each preset with the method, one after the other in one process."""
    print(f"load at start {load()}", flush=True)
    ctx = CONTEXTS.get("workspace/bench_pipeline")
    base = EdgePipeline(ctx, CloudModelConfig(privacy_method="none", max_tokens=96, cache=False))
    base.cloud(warm)  # server start and first prompt: not steady state
    base_rate, _ = run(base, xs, "none")
    measured = []
    for preset in args.detector.split(","):
        cloud = EdgePipeline(ctx, CloudModelConfig(privacy_method=args.method, max_tokens=96, cache=False,
                                                   detector=preset))
        cloud.gateway.warm_up()
        check_egress(cloud.protect(warm), cloud.structured)  # the guard's own recognizers, built once
        measured.append((preset, *run(cloud, xs, f"{args.method} / {preset}")))
    for preset, rate, results in measured:
        report(f"privacy layer ({preset!r}, {args.method!r})", results, base_rate, rate)
    if not args.no_edge:
        from cloud_edge_privacy.detection import build_detector
        from cloud_edge_privacy.models.llama_edge import LlamaEdgeModel

        edge = LlamaEdgeModel(max_tokens=96, cache=False)
        edge.load()
        detector = build_detector(args.detector.split(",")[0])  # not the cloud run's: its cache would answer
        detector.warm_up()
        lat = []
        t0 = time.perf_counter()
        for x in xs:
            t = time.perf_counter()
            edge_inference(x, edge, detector)
            lat.append(time.perf_counter() - t)
        print(f"edge route             : {len(xs) / (time.perf_counter() - t0) * 60:.2f} samples/min, "
              f"p50 {percentile(lat, .5):.1f} s, p95 {percentile(lat, .95):.1f} s")
    from cloud_edge_privacy.models.local_server import _SERVERS

    print(f"peak memory: this process {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB"
          + "".join(f", local cloud server {vm_hwm_mb(s.proc.pid):.0f} MB" for s in _SERVERS.values() if s.proc)
          + f"; load at end {load()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=None, help="TAB JSON (default: the shipped sample)")
    ap.add_argument("--n", type=int, default=6, help="documents measured (one more is read for the warm-up)")
    ap.add_argument("--method", default="placeholder")
    ap.add_argument("--detector", default="default",
                    help="detector preset(s) of the privacy path, comma-separated (e.g. default,fast: one baseline)")
    ap.add_argument("--no-edge", action="store_true", help="skip the edge route's figures")
    ap.add_argument("--profile", action="store_true", help="only the privacy path, no LLM: time per stage and part")
    ap.add_argument("--cprofile", default="", help="with --profile: also write cProfile statistics to this file")
    args = ap.parse_args()
    xs, warm = samples(args.data or str(sample_tab_path()), args.n)
    if not args.profile:
        bench(xs, warm, args)
    for preset in args.detector.split(",") if args.profile else ():
        profile(xs, warm, args, preset)


if __name__ == "__main__":
    main()
