"""Our runner end to end with the real default models: llama.cpp edge model, llama.cpp OpenAI-compatible
server on 127.0.0.1 as the cloud, spaCy detection, real TAB dev documents (data/tab in the repository).  Slow (minutes): the models are installed by scripts/setup.sh in CI too."""
import csv
import json
from pathlib import Path

import pytest
import yaml

from conftest import EXAMPLE, SHARED_TAB

pytestmark = pytest.mark.llm


def _rank(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture
def isolated_cloud(monkeypatch):
    for var in ("CEP_CLOUD_BASE_URL", "CEP_CLOUD_MODEL", "CEP_CLOUD_API_KEY"):
        monkeypatch.delenv(var, raising=False)   # -> the local llama.cpp server is started


def _job_copy(tmp_path, mode, threshold_words, confidence):
    """The shipped job with its workspace, mining mode and router thresholds changed."""
    job = yaml.safe_load((EXAMPLE / "benchmarkingjob.yaml").read_text())
    env = yaml.safe_load((EXAMPLE / "testenv" / "testenv.yaml").read_text())
    alg = yaml.safe_load((EXAMPLE / "testalgorithms" / "test_algorithms.yaml").read_text())
    env["testenv"]["hard_example_mining_mode"] = mode
    for m in alg["algorithm"]["modules"]:
        if m["type"] == "hard_example_mining":
            m["hyperparameters"] = [{"confidence_threshold": {"values": [confidence]}},
                                    {"max_edge_words": {"values": [threshold_words]}}]
    (tmp_path / "env.yaml").write_text(yaml.safe_dump(env))
    (tmp_path / "alg.yaml").write_text(yaml.safe_dump(alg))
    job["benchmarkingjob"].update(workspace=str(tmp_path / "ws"), testenv=str(tmp_path / "env.yaml"))
    job["benchmarkingjob"]["test_object"]["algorithms"][0]["url"] = str(tmp_path / "alg.yaml")
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(job))
    return str(tmp_path / "job.yaml")


def test_default_job_on_three_tab_dev_documents(in_repo, isolated_cloud, tmp_path):
    from cloud_edge_privacy.bench.runner import run_job

    tab = SHARED_TAB / "echr_dev.json"
    cfg = _job_copy(tmp_path, "mining-then-inference", 80, 0.8)
    summary = run_job(cfg, tab, limit=3, progress=False)
    assert summary.failures == []
    rows = _rank(summary.rank_files["all"])
    assert sorted(r["cloudmodel-privacy_method"] for r in rows) == ["none", "placeholder", "suppression"]
    by_method = {r["cloudmodel-privacy_method"]: r for r in rows}
    for method in ("placeholder", "suppression"):
        assert int(by_method[method]["leak_direct"]) == 0, by_method[method]
        assert float(by_method[method]["pdr"]) > 0.7
    # the unprotected baseline really sends raw text, and the audit catches it
    assert int(by_method["none"]["leak_direct"]) > 0
    assert rows[0]["cloudmodel-privacy_method"] != "none"          # sorted by leak_direct ascending
    audit = [json.loads(l) for l in (Path(summary.output_dir) / "privacy-gateway-routing" / "cloud_audit.jsonl").open()]
    # one line per HTTP attempt (or cache hit) for 3 methods x 3 long documents, each with the exact messages
    assert len(audit) >= 9 and all(a["messages"] for a in audit)
    assert all("benchmark (seed 42)" in p for p in
               [json.loads(l)["result"]["randomness"] for l in open(Path(by_method["placeholder"]["url"]) / "predictions.jsonl")])
    preds = [json.loads(l) for l in open(Path(by_method["placeholder"]["url"]) / "predictions.jsonl")]
    assert all(p["cloud_result"]["answer"] for p in preds)          # real answers from the real server


def test_inference_then_mining_on_the_sample(in_repo, isolated_cloud, tmp_path):
    """Edge first; a confidence threshold above 1 sends every sample on to the cloud."""
    from cloud_edge_privacy.bench.runner import run_job

    cfg = _job_copy(tmp_path, "inference-then-mining", 80, 1.01)
    summary = run_job(cfg, None, limit=2, progress=False)
    assert summary.failures == []
    rows = _rank(summary.rank_files["all"])
    assert len(rows) == 3 and all(float(r["edge_ratio"]) == 0.0 for r in rows)
    preds = [json.loads(l) for l in open(Path(rows[0]["url"]) / "predictions.jsonl")]
    for p in preds:
        assert p["edge_result"]["answer"] and 0.0 <= p["edge_result"]["confidence"] <= 1.0
        assert p["cloud_result"]["router"]["signal"] == "edge_confidence"


def test_cli_run_refuses_an_unknown_method_before_anything_runs(in_repo, isolated_cloud, tmp_path, capsys):
    """An unknown privacy method is a configuration error naming the file: nothing runs, nothing is ranked."""
    from cloud_edge_privacy.cli import main

    cfg = _job_copy(tmp_path, "mining-then-inference", 10_000, 0.8)
    alg = yaml.safe_load(open(tmp_path / "alg.yaml"))
    for m in alg["algorithm"]["modules"]:
        if m["type"] == "cloudmodel":
            m["hyperparameters"][0] = {"privacy_method": {"values": ["placeholder", "no-such-method"]}}
    (tmp_path / "alg.yaml").write_text(yaml.safe_dump(alg))
    assert main(["run", "-f", cfg, "--sample", "--limit", "1", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert str(tmp_path / "alg.yaml") in err and "privacy_method 'no-such-method' is not one of" in err
    assert not (tmp_path / "ws" / "tab_privacy_default" / "rank").exists()
