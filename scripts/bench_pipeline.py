"""End-to-end pipeline figures: samples/min with and without privacy, latency per route, peak memory.
A benchmark that prints figures (not a test).  Uses the real models and the local llama.cpp server.

    .venv/bin/python scripts/bench_pipeline.py [--data data/tab/echr_dev.json] [--n 6] [--method placeholder]
        [--detector default]
"""
from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from cloud_edge_privacy.metrics.performance import lo_pct, ti_pct  # noqa: E402
from cloud_edge_privacy.core.context import CONTEXTS  # noqa: E402
from cloud_edge_privacy.models.llama_edge import LlamaEdgeModel  # noqa: E402
from cloud_edge_privacy.core.module_configs import CloudModelConfig  # noqa: E402
from cloud_edge_privacy.core.pipeline import EdgePipeline, edge_inference  # noqa: E402
from cloud_edge_privacy.metrics.stats import percentile  # noqa: E402
from cloud_edge_privacy.datasets.tab import DEFAULT_INSTRUCTION, load_tab, sample_tab_path  # noqa: E402


def vm_hwm_mb(pid: int) -> float:
    """Peak resident memory of a process (Linux VmHWM), in MB."""
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", default=None, help="TAB JSON (default: the shipped sample)")
    ap.add_argument("--n", type=int, default=6)
    ap.add_argument("--method", default="placeholder")
    ap.add_argument("--detector", default="default", help="detector preset of the privacy path (e.g. default, fast)")
    args = ap.parse_args()
    docs = load_tab(args.data or sample_tab_path())[: args.n]
    xs = [{"doc_id": d.doc_id, "text": d.text, "instruction": DEFAULT_INSTRUCTION} for d in docs]
    edge = LlamaEdgeModel(max_tokens=96, cache=False)
    edge.load()
    figures = {}
    ctx = CONTEXTS.get("workspace/bench_pipeline")
    for method in ("none", args.method):
        cloud = EdgePipeline(ctx, CloudModelConfig(privacy_method=method, max_tokens=96, cache=False,
                                                   detector=args.detector))
        cloud.cloud(xs[0])  # warm-up: server start and first prompt are not steady state
        lat, results = [], []
        t0 = time.perf_counter()
        for x in xs:
            t = time.perf_counter()
            results.append(cloud.cloud(x))
            lat.append(time.perf_counter() - t)
        figures[method] = (len(xs) / (time.perf_counter() - t0) * 60, lat, results)
        print(f"cloud route, {method:12s}: {figures[method][0]:.2f} samples/min, "
              f"p50 {percentile(lat, .5):.1f} s, p95 {percentile(lat, .95):.1f} s")
    lat = []
    t0 = time.perf_counter()
    for x in xs:
        t = time.perf_counter()
        edge_inference(x, edge, ctx.detector(args.detector))
        lat.append(time.perf_counter() - t)
    print(f"edge route             : {len(xs) / (time.perf_counter() - t0) * 60:.2f} samples/min, "
          f"p50 {percentile(lat, .5):.1f} s, p95 {percentile(lat, .95):.1f} s")
    base, priv = figures["none"][0], figures[args.method][0]
    y_pred = [[True, r, None, r] for r in figures[args.method][2]]
    print(f"throughput impact of {args.method} on the cloud route: {100 * (base - priv) / base:.1f} % between "
          f"two runs (noisy: the answers differ in length), {ti_pct([{}] * len(y_pred), y_pred):.2f} % from "
          f"the same run's stage timings; latency overhead {lo_pct([{}] * len(y_pred), y_pred):.2f} %")
    from cloud_edge_privacy.models.local_server import _SERVERS

    print(f"peak memory: this process {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB"
          + "".join(f", local cloud server {vm_hwm_mb(s.proc.pid):.0f} MB" for s in _SERVERS.values() if s.proc))


if __name__ == "__main__":
    main()
