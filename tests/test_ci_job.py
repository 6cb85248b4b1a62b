"""The KubeEdge CI job: benchmarkingjob_ci.yaml on the embedded sample with the local models, every metric checked
against the committed expected values; a deliberately broken value makes the check fail with a readable diff."""
import json
import subprocess
import sys
import time

import pytest

from conftest import EXAMPLE, REPO

JOB = EXAMPLE / "benchmarkingjob_ci.yaml"
EXPECTED = EXAMPLE / "benchmarkingjob_ci_expected.json"


@pytest.fixture(scope="module")
def ci_run(tmp_path_factory):
    """Run the CI job once (our runner, --ci) in a scratch workspace; returns (exit code, output, job folder)."""
    tmp = tmp_path_factory.mktemp("ci")
    job = tmp / "benchmarkingjob_ci.yaml"
    job.write_text(JOB.read_text().replace('workspace: "./workspace"', f'workspace: "{tmp / "ws"}"'))
    env_keep = {k: v for k, v in __import__("os").environ.items() if not k.startswith(("CEP_CLOUD_", "TAB_DATA_DIR"))}
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "cloud_edge_privacy.cli", "run", "-f", str(job), "--sample",
                           "--no-progress", "--no-judge", "--ci", str(EXPECTED)],
                          cwd=REPO, env=env_keep, capture_output=True, text=True, timeout=1800)
    print(f"CI job wall time: {time.perf_counter() - t0:.0f} s")
    return proc.returncode, proc.stdout + proc.stderr, tmp / "ws" / "tab_privacy_ci"


def test_ci_job_matches_the_committed_expected_values(ci_run):
    code, out, job_dir = ci_run
    assert code == 0, out[-4000:]
    assert "CI check passed" in out
    expected = json.loads(EXPECTED.read_text())
    assert sorted(expected["cases"]) == ["none", "placeholder", "suppression"]
    rules = expected["rules"]
    assert {rules[m]["check"] for m in ("latency_mean_ms", "lo_pct", "ti_pct")} == {"skip"}   # wall clock
    assert rules["llm_judge"]["check"] == "abs" and rules["llm_judge"].get("why")             # stated tolerance
    exact = [m for m in expected["cases"]["none"] if rules.get(m, {"check": "exact"})["check"] == "exact"]
    assert {"leak_direct", "sels", "pdr", "n_failed", "cache_replays", "edge_ratio"} <= set(exact)


def test_a_broken_metric_fails_the_ci_check_with_a_readable_diff(ci_run, tmp_path):
    code, out, job_dir = ci_run
    assert code == 0, out[-4000:]
    broken = json.loads(EXPECTED.read_text())
    broken["cases"]["suppression"]["leak_direct"] = 3.0                 # a regression in detection would do this
    broken["cases"]["none"]["llm_judge"] = (broken["cases"]["none"]["llm_judge"] or 0) + 5.0   # beyond its tolerance
    path = tmp_path / "broken_expected.json"
    path.write_text(json.dumps(broken))
    proc = subprocess.run([sys.executable, "-m", "cloud_edge_privacy.reporting.ci_check", str(job_dir), str(path)],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("CI check FAILED: 2 of ")
    row = next(l for l in lines if l.startswith("suppression") and "leak_direct" in l)
    assert row.split() == ["suppression", "leak_direct", "3", "0", "exact"]
    assert any(l.startswith("none") and "llm_judge" in l and "|diff| <=" in l for l in lines)
