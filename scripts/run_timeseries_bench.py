#!/usr/bin/env python
"""One command for the time-series privacy benchmark (issue 14).

    .venv/bin/python scripts/run_timeseries_bench.py            # default grid -> workspace/timeseries/
    .venv/bin/python scripts/run_timeseries_bench.py --out examples/TimeSeries/cloud_edge_timeseries_privacy_bench/results
    .venv/bin/python scripts/run_timeseries_bench.py --tiny --out /tmp/ts   # smoke run (CI)

Writes results.json (config, releases with their privacy maps, every answer, STS, errors, attacks) and
table.md.  LLM answers are cached on disk, so a rerun only recomputes embeddings and attacks.
"""
from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from cloud_edge_privacy.timeseries.bench import (BenchConfig, TSModels, markdown_table, run_bench,  # noqa: E402
                                                 write_ianvs_jsonl, write_results)
from cloud_edge_privacy.timeseries.data import DATASETS, default_series  # noqa: E402
from cloud_edge_privacy.timeseries.operator import METHODS  # noqa: E402

EXAMPLE = REPO / "examples" / "TimeSeries" / "cloud_edge_timeseries_privacy_bench"
DEFAULT_OUT = REPO / "workspace" / "timeseries"  # the committed results/ are rewritten only with --out


def default_noise_dir() -> Path:
    from cloud_edge_privacy.models.catalog import cache_dir

    return cache_dir() / "timeseries_noise"
IANVS_DATA = EXAMPLE / "testenv" / "data" / "timeseries_test.jsonl"


def parse(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder (default: workspace/timeseries; the example's committed "
                                                         "results/ only when given explicitly)")
    p.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    p.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    p.add_argument("--length", type=int, default=24, help="values per series (mitdb has 25 beats at most)")
    p.add_argument("--series", type=int, default=1, help="private series per dataset (mitdb has one)")
    p.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3], help="benchmark noise seeds")
    p.add_argument("--templates", nargs="+", default=["max", "mean", "event"], choices=["max", "mean", "event"])
    p.add_argument("--models", nargs="+", default=["edge", "cloud"], choices=["edge", "cloud"])
    p.add_argument("--max-tokens", type=int, default=48)
    p.add_argument("--threshold", type=float, default=0.9, help="correlation the adaptive ε must keep")
    p.add_argument("--calibration", choices=["public", "private"], default="public",
                   help="choose ε on public calibration data (default) or on the private series (paper; leaks)")
    p.add_argument("--user-epsilon", type=float, default=10.0, help="ε of the user-level window baseline")
    p.add_argument("--windows", type=int, default=4)
    p.add_argument("--attack-draws", type=int, default=200)
    p.add_argument("--write-ianvs-data", nargs="?", const=str(IANVS_DATA), default=None, metavar="JSONL",
                   help="only write the Ianvs test JSONL (x = {series, template}, y = numeric truth) and exit")
    p.add_argument("--noise-dir", type=Path, default=None,
                   help="where stored noise lives (default: <cache>/timeseries_noise; edge-private in deployment)")
    p.add_argument("--cache-only", action="store_true",
                   help="use only answers already in the disk caches (missing samples are left out; n says so)")
    p.add_argument("--tiny", action="store_true",
                   help="smoke run: 12 values, one seed, one template, edge model only, 16 tokens, 20 attack draws")
    return p.parse_args(argv)


def main(argv=None) -> int:
    a = parse(argv)
    # SIGTERM -> SystemExit, so the atexit hook stops the local llama.cpp server this run started
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    cfg = BenchConfig(datasets=tuple(a.datasets), length=a.length, series_per_dataset=a.series,
                      methods=tuple(a.methods), seeds=tuple(a.seeds), models=tuple(a.models),
                      templates=tuple(a.templates),
                      max_tokens=a.max_tokens, threshold=a.threshold, calibration=a.calibration,
                      user_epsilon=a.user_epsilon, windows=a.windows, attack_draws=a.attack_draws)
    if a.tiny:
        cfg.length, cfg.seeds, cfg.templates, cfg.models = 12, (1,), ("max",), ("edge",)
        cfg.max_tokens, cfg.attack_draws = 16, 20
    if a.write_ianvs_data:
        n = write_ianvs_jsonl(Path(a.write_ianvs_data), default_series(cfg.length, cfg.series_per_dataset,
                                                                       cfg.datasets), cfg.templates)
        print(f"wrote {n} samples to {a.write_ianvs_data}")
        return 0
    results = run_bench(cfg, TSModels(cfg.max_tokens, cache_only=a.cache_only),
                        noise_dir=a.noise_dir or default_noise_dir(),
                        log=lambda m: print(m, file=sys.stderr, flush=True))
    paths = write_results(results, a.out)
    print(markdown_table(results))
    print(f"\nLLM calls: {results['llm_calls']}; {results['elapsed_s']} s; wrote {paths['json']} and {paths['table']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
