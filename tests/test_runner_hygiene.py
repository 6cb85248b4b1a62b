"""Runs you can trust: per-sample isolation, a lock per job, incomplete markers, data as Ianvs names it."""
import json
import threading

import pytest

from conftest import REPO

LEAK_ALGO = REPO / "tests" / "data" / "leak_job" / "test_algorithms.yaml"
SAMPLE = REPO / "examples" / "TAB" / "cloud_edge_collaborative_inference_bench" / "data" / "tab_sample.jsonl"


def _job(tmp_path, methods='["suppression"]', test_data=SAMPLE):
    algo = LEAK_ALGO.read_text()
    start = algo.index('        - privacy_method:')
    end = algo.index('        - randomness:')
    algo = algo[:start] + f"        - privacy_method: {{values: {methods}}}\n" + algo[end:]
    (tmp_path / "algo.yaml").write_text(algo)
    (tmp_path / "env.yaml").write_text(
        (REPO / "tests" / "data" / "leak_job" / "test_env.yaml").read_text()
        .replace("./tests/data/leak_job/leak.jsonl", str(test_data)))
    job = (REPO / "tests" / "data" / "leak_job" / "benchmarkingjob.yaml").read_text()
    job = job.replace("./tests/data/leak_job/test_env.yaml", str(tmp_path / "env.yaml"))
    job = job.replace("./tests/data/leak_job/test_algorithms.yaml", str(tmp_path / "algo.yaml"))
    job = job.replace('workspace: "./workspace"', f'workspace: "{tmp_path / "ws"}"')
    (tmp_path / "job.yaml").write_text(job)
    return tmp_path / "job.yaml", tmp_path / "ws" / "leak_check"


def _preds(out):
    return [json.loads(l) for p in sorted(out.glob("*/*/predictions.jsonl")) for l in p.read_text().splitlines()]


def test_one_cloud_fault_is_one_samples_failure(fake_cloud, tmp_path, in_repo, capsys):
    from cloud_edge_privacy import cli

    fake_cloud.mode = "fail_after:1"
    job, out = _job(tmp_path)
    code = cli.main(["run", "-f", str(job), "--no-progress", "--no-judge"])
    preds = _preds(out)
    assert code == 1                                              # non-zero: samples failed
    assert preds[0]["status"] == "ok" and preds[0]["result"]["answer"] == "summary"
    assert len(preds) >= 3 and all(p["status"] == "cloud_failure" for p in preds[1:])
    audit = [json.loads(l) for l in (out / "leak-check" / "cloud_audit.jsonl").read_text().splitlines()]
    assert sum(a["event"] == "http_attempt" for a in audit) == len(fake_cloud.requests)
    printed = capsys.readouterr()
    assert "FAILED test case" not in printed.err                  # the test case itself completed
    assert f"1/{len(preds)} samples completed, {len(preds) - 1} failed" in printed.out
    assert (out / "rank" / "all_rank.csv").exists() and not (out / "INCOMPLETE").exists()


def test_a_second_run_of_the_same_job_is_refused(fake_cloud, tmp_path, in_repo, capsys):
    from cloud_edge_privacy import cli
    from cloud_edge_privacy.bench.runner import job_lock

    job, out = _job(tmp_path)
    with job_lock(str(out)):
        assert cli.main(["run", "-f", str(job), "--no-progress"]) == 2
    assert "another run of this job is in progress" in capsys.readouterr().err


def test_interrupted_run_is_marked_and_a_rerun_leaves_no_stale_report(fake_cloud, tmp_path, in_repo, monkeypatch):
    from cloud_edge_privacy import cli
    from cloud_edge_privacy.bench import runner

    job, out = _job(tmp_path)
    out.mkdir(parents=True)
    (out / "report.md").write_text("stale report of an earlier run")

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "run_test_case", interrupted)
    with pytest.raises(KeyboardInterrupt):
        cli.main(["run", "-f", str(job), "--no-progress"])
    assert (out / "INCOMPLETE").exists() and not (out / "report.md").exists()


def test_without_flags_the_yaml_dataset_is_used(fake_cloud, tmp_path, in_repo, capsys, monkeypatch):
    from cloud_edge_privacy import cli

    monkeypatch.delenv("TAB_DATA_DIR", raising=False)
    job, out = _job(tmp_path)
    cli.main(["run", "-f", str(job), "--no-progress", "--no-judge", "--limit", "1"])
    assert "the dataset named in the testenv YAML" in capsys.readouterr().out
    assert _preds(out)[0]["doc_id"] == json.loads(SAMPLE.read_text().splitlines()[0])["question"]["doc_id"]


@pytest.mark.parametrize("bad,message", [
    ({"question": {"doc_id": "a", "text": None}, "answer": {}}, "must be a string"),
    ({"question": {"doc_id": "a", "text": "x" * 5_000_000}, "answer": {}}, "more than the limit"),
])
def test_test_data_gets_the_same_validation_as_tab(bad, message, fake_cloud, tmp_path, in_repo, capsys):
    from cloud_edge_privacy import cli

    data = tmp_path / "bad.jsonl"
    data.write_text(json.dumps(bad) + "\n")
    job, out = _job(tmp_path)
    assert cli.main(["run", "-f", str(job), "--test-data", str(data), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert str(data) in err and "line 1" in err and message in err
    assert fake_cloud.requests == []


def test_non_utf8_test_data_is_a_clear_error(tmp_path, in_repo, capsys, fake_cloud):
    from cloud_edge_privacy import cli

    data = tmp_path / "latin1.jsonl"
    data.write_bytes('{"question": {"text": "Åse"}, "answer": {}}\n'.encode("latin-1"))
    job, _ = _job(tmp_path)
    assert cli.main(["run", "-f", str(job), "--test-data", str(data), "--no-progress"]) == 2
    assert "not UTF-8" in capsys.readouterr().err


def test_cache_replays_are_counted_shown_and_refusable(fake_cloud, tmp_path, in_repo, capsys, monkeypatch):
    """Issue 19 item 6: a cloud that now answers 500 to everything is hidden by replays no more."""
    from cloud_edge_privacy import cli

    monkeypatch.setenv("CEP_CACHE_DIR", str(tmp_path / "cache"))
    job, out = _job(tmp_path)
    algo = tmp_path / "algo.yaml"
    algo.write_text(algo.read_text().replace("- cache: {values: [false]}", "- cache: {values: [true]}"))
    args = ["run", "-f", str(job), "--no-progress", "--no-judge"]
    assert cli.main(args) == 0                                      # 1. fills the cache
    n = len(_preds(out))
    sent_first = len(fake_cloud.requests)
    assert sent_first == n and capsys.readouterr().out.count("0 replayed from the response cache") == 1

    fake_cloud.mode = "status:500"                                  # 2. the cloud is down now
    assert cli.main(args) == 0                                      # every answer is a replay ...
    printed = capsys.readouterr().out
    assert len(fake_cloud.requests) == sent_first                   # ... nothing was sent ...
    assert f"{n}/{n} samples completed, 0 failed, {n} replayed from the response cache" in printed  # ... and it says so
    assert f"{n} answer(s) replayed from the response cache" in printed
    preds = _preds(out)
    assert all(p["replayed"] and p["result"]["cloud_cache_hit"] for p in preds)
    report = (out / "report.md").read_text()
    assert f"Cache replays: {n} of {n} answers were replayed" in report
    rows = (out / "rank" / "leaderboard.csv").read_text().splitlines()
    head = rows[1 - 1].split(",")
    assert rows[1].split(",")[head.index("cache_replays")] == str(n)
    # replays are left out of latency: no sample of this run has a latency of its own
    from cloud_edge_privacy.metrics import performance
    y_pred = [[p["is_hard_example"], p["result"], p["edge_result"], p["cloud_result"]] for p in preds]
    assert performance.cache_replays([{}] * n, y_pred) == n
    assert performance.latency_mean_ms([{}] * n, y_pred) != performance.latency_mean_ms([{}] * n, y_pred)  # NaN

    assert cli.main(args + ["--no-cache"]) == 1                     # 3. --no-cache: the failing cloud fails
    printed = capsys.readouterr()
    assert f"0/{n} samples completed, {n} failed, 0 replayed" in printed.out
    assert len(fake_cloud.requests) > sent_first
    assert all(p["status"] == "cloud_failure" for p in _preds(out))
