"""Scale-out on Ray: the same job on a local Ray cluster with 2 workers gives every deterministic metric of the
serial run, into the same rank files."""
import csv
import re

import pytest

from conftest import EXAMPLE

# metrics whose value does not depend on the wall clock or on an LLM judge/attacker (the edge answers are
# deterministic too, but the judge and the fill-in attack would only make the test slower)
DETERMINISTIC = ["n_completed", "n_failed", "pdr", "sels", "leak_direct", "er_di", "er_qi", "token_recall",
                 "token_precision", "iar", "iar_coref_leak", "iar_reidentification", "iar_trir", "trir_original",
                 "cpp", "edge_ratio", "cloud_tokens", "privacy_failures", "cache_replays"]


def _job(tmp_path, name):
    env = (EXAMPLE / "testenv" / "testenv.yaml").read_text()
    blocks = re.split(r"(?=\n    - name: )", env)
    kept = [b for b in blocks if not b.startswith("\n    - name: ")
            or re.match(r'\n    - name: "([^"]+)"', b).group(1) in DETERMINISTIC]
    (tmp_path / "env.yaml").write_text("".join(kept))
    algo = (EXAMPLE / "testalgorithms" / "test_algorithms_ci.yaml").read_text().replace(
        '["none", "suppression", "placeholder"]', '["none", "suppression", "pseudonym"]')
    (tmp_path / "algo.yaml").write_text(algo)
    job = (EXAMPLE / "benchmarkingjob_ci.yaml").read_text()
    job = job.replace("./examples/TAB/cloud_edge_collaborative_inference_bench/testenv/testenv.yaml",
                      str(tmp_path / "env.yaml"))
    job = job.replace("./examples/TAB/cloud_edge_collaborative_inference_bench/testalgorithms/test_algorithms_ci.yaml",
                      str(tmp_path / "algo.yaml"))
    job = job.replace('workspace: "./workspace"', f'workspace: "{tmp_path / name}"')
    job = re.sub(r"      - (llm_judge|latency_mean_ms): \"(descend|ascend)\"\n", "", job)
    job = re.sub(r'metrics: \[[^\]]*\]', "metrics: [" + ", ".join(f'"{m}"' for m in DETERMINISTIC) + "]", job,
                 flags=re.S)
    (tmp_path / f"{name}.yaml").write_text(job)
    return tmp_path / f"{name}.yaml", tmp_path / name / "tab_privacy_ci"


def _rows(out):
    with open(out / "rank" / "all_rank.csv", newline="") as fh:
        return {r["cloudmodel-privacy_method"]: r for r in csv.DictReader(fh)}


def test_ray_with_two_workers_equals_serial(fake_cloud, tmp_path, in_repo, capsys, monkeypatch):
    pytest.importorskip("ray", reason="Ray is part of the [federated] extra that scripts/setup.sh installs")
    from cloud_edge_privacy import cli

    serial_job, serial_out = _job(tmp_path, "serial")
    ray_job, ray_out = _job(tmp_path, "ray")
    assert cli.main(["run", "-f", str(serial_job), "--sample", "--no-progress", "--no-judge"]) == 0
    assert cli.main(["run", "-f", str(ray_job), "--sample", "--no-progress", "--no-judge",
                     "--executor", "ray", "--workers", "2"]) == 0
    serial, ray = _rows(serial_out), _rows(ray_out)
    assert set(serial) == set(ray) == {"none", "suppression", "pseudonym"}
    for method in serial:
        for m in DETERMINISTIC:
            assert serial[method][m] == ray[method][m], (method, m, serial[method][m], ray[method][m])
    assert serial["none"]["leak_direct"] not in ("", "0")          # the comparison is not between empty values
    assert serial["suppression"]["leak_direct"] == "0"
    # the Ray run wrote the same per-test-case outputs under the job folder, and the report reads them
    assert len(list(ray_out.glob("*/*/predictions.jsonl"))) == 3
    assert (ray_out / "report.md").exists() and (ray_out / "leaderboard.html").exists()
