"""Smoke runs of the time-series bench with the real models (tiny config: short series, few tokens)."""
import json
import subprocess
import sys

import pytest

from conftest import REPO

EXAMPLE = REPO / "examples" / "TimeSeries" / "cloud_edge_timeseries_privacy_bench"


@pytest.mark.llm
def test_tiny_bench_writes_a_table_with_every_method(tmp_path):
    out = tmp_path / "res"
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "run_timeseries_bench.py"), "--tiny",
                           "--datasets", "solar", "mitdb", "--out", str(out)],
                          capture_output=True, text=True, timeout=1200, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads((out / "results.json").read_text())
    rows = {(r["dataset"], r["method"]): r for r in res["rows"]}
    assert set(rows) == {(d, m) for d in ("solar", "mitdb") for m in ("none", "rehman_adaptive", "uniform",
                                                                         "user_windows")}
    for d in ("solar", "mitdb"):
        assert rows[(d, "none")]["sts_edge"]["mean"] == 1.0                  # same prompt, same answer
        assert rows[(d, "none")]["event_success"] == 1.0                      # nothing hidden without noise
        assert rows[(d, "uniform")]["epsilon_series"] == 12.0                 # 12 values x ε = 1
        assert rows[(d, "user_windows")]["epsilon_series"] == 10.0
        assert rows[(d, "user_windows")]["reconstruction_success"] < 0.2
        for m in ("rehman_adaptive", "uniform", "user_windows"):
            assert 0.0 < rows[(d, m)]["sts_edge"]["mean"] <= 1.0
    # every answer the edge got for a noised method was asked with released values only
    for x in res["samples"]:
        assert x["answer_sent"] and x["answer_original"]
    assert "| solar | solar_generation | rehman_adaptive |" in (out / "table.md").read_text()
    assert "seed" in res["randomness"]


@pytest.mark.llm
def test_ianvs_example_runs_with_our_runner(tmp_path, in_repo):
    from cloud_edge_privacy.bench.runner import run_job
    from cloud_edge_privacy.timeseries.bench import write_ianvs_jsonl
    from cloud_edge_privacy.timeseries.data import load_series

    data = tmp_path / "ts.jsonl"
    write_ianvs_jsonl(data, [load_series("solar", 6)], templates=("max",))
    summary = run_job(str(EXAMPLE / "benchmarkingjob.yaml"), limit=1, progress=False, test_data=str(data))
    assert not summary.failures, summary.failures
    by = {r.algorithm.name: r.metrics for r in summary.results}
    assert set(by) == {"ts-none", "ts-rehman-adaptive", "ts-uniform-eps1", "ts-user-windows"}
    assert by["ts-none"]["ts_sts_cloud"] == 1.0 and by["ts-none"]["ts_attack_event_success"] == 1.0
    assert by["ts-uniform-eps1"]["ts_epsilon_series"] == 6.0
    assert by["ts-user-windows"]["ts_epsilon_series"] == 10.0
    assert by["ts-none"]["ts_cloud_share"] == 1.0
    for m in by.values():
        assert 0.0 <= m["ts_numeric_error_cloud"] <= 1.0
