"""Scale-out on Ray: the same job on a local Ray cluster with 2 workers, one task per test case and with each
test case's samples split into shard tasks, gives every deterministic metric of the serial run, into the same
rank files; and the pieces that make sharding sound (shard plan, audit merge, core claims, the per-session
budget rule)."""
import csv
import json
import re
import threading

import pytest

from conftest import EXAMPLE

# metrics whose value does not depend on the wall clock or on an LLM judge/attacker (the edge answers are
# deterministic too, but the judge and the fill-in attack would only make the test slower)
DETERMINISTIC = ["n_completed", "n_failed", "pdr", "sels", "leak_direct", "er_di", "er_qi", "token_recall",
                 "token_precision", "iar", "iar_coref_leak", "iar_reidentification", "iar_trir", "trir_original",
                 "cpp", "edge_ratio", "cloud_tokens", "privacy_failures", "cache_replays"]
METHODS = {"none", "suppression", "pseudonym", "dp_numbers", "prism_ldp"}


def _job(tmp_path, name):
    """The CI job with the deterministic metrics only, pseudonyms instead of placeholders, and a second algorithm
    with two DP methods (benchmark randomness from the seed) under a per-document budget."""
    env = (EXAMPLE / "testenv" / "testenv.yaml").read_text()
    blocks = re.split(r"(?=\n    - name: )", env)
    kept = [b for b in blocks if not b.startswith("\n    - name: ")
            or re.match(r'\n    - name: "([^"]+)"', b).group(1) in DETERMINISTIC]
    (tmp_path / "env.yaml").write_text("".join(kept))
    ci_algo = (EXAMPLE / "testalgorithms" / "test_algorithms_ci.yaml").read_text()
    (tmp_path / "algo.yaml").write_text(ci_algo.replace('["none", "suppression", "placeholder"]',
                                                        '["none", "suppression", "pseudonym"]'))
    dp = ci_algo.replace('["none", "suppression", "placeholder"]', '["dp_numbers", "prism_ldp"]')
    dp = dp.replace('        - randomness: {values: ["benchmark"]}\n',
                    '        - randomness: {values: ["benchmark"]}\n'
                    '        - epsilon: {values: [2.0]}\n'
                    '        - budget_per_document: {values: [{pure: 30.0}]}\n')
    assert "budget_per_document" in dp
    (tmp_path / "algo_dp.yaml").write_text(dp)
    job = (EXAMPLE / "benchmarkingjob_ci.yaml").read_text()
    job = job.replace("./examples/TAB/cloud_edge_collaborative_inference_bench/testenv/testenv.yaml",
                      str(tmp_path / "env.yaml"))
    job = job.replace("url: \"./examples/TAB/cloud_edge_collaborative_inference_bench/testalgorithms/test_algorithms_ci.yaml\"",
                      f"url: \"{tmp_path / 'algo.yaml'}\"\n      - name: \"dp-gateway\"\n"
                      f"        url: \"{tmp_path / 'algo_dp.yaml'}\"")
    assert "dp-gateway" in job
    job = job.replace('workspace: "./workspace"', f'workspace: "{tmp_path / name}"')
    job = re.sub(r"      - (llm_judge|latency_mean_ms): \"(descend|ascend)\"\n", "", job)
    job = re.sub(r'metrics: \[[^\]]*\]', "metrics: [" + ", ".join(f'"{m}"' for m in DETERMINISTIC) + "]", job,
                 flags=re.S)
    (tmp_path / f"{name}.yaml").write_text(job)
    return tmp_path / f"{name}.yaml", tmp_path / name / "tab_privacy_ci"


def _rows(out):
    with open(out / "rank" / "all_rank.csv", newline="") as fh:
        return {r["cloudmodel-privacy_method"]: r for r in csv.DictReader(fh)}


def _audit(out):
    lines = []
    for algo in ("privacy-gateway-routing", "dp-gateway"):
        path = out / algo / "cloud_audit.jsonl"
        lines += [json.loads(l) for l in path.read_text().splitlines()] if path.exists() else []
    return sorted(json.dumps(l.get("messages"), sort_keys=True) for l in lines)


def test_ray_cases_and_sample_shards_equal_serial(fake_cloud, tmp_path, in_repo, capsys):
    pytest.importorskip("ray", reason="Ray is part of the [federated] extra that scripts/setup.sh installs")
    from cloud_edge_privacy import cli

    runs = {"serial": [], "ray-cases": ["--executor", "ray", "--workers", "2"],
            "ray-shards": ["--executor", "ray", "--workers", "2", "--shard-samples", "2"]}
    rows, outs, codes = {}, {}, {}
    for name, extra in runs.items():
        job, outs[name] = _job(tmp_path, name)
        codes[name] = cli.main(["run", "-f", str(job), "--sample", "--no-progress", "--no-judge", *extra])
        rows[name] = _rows(outs[name])
    # a sample whose release would overspend its document's budget fails closed (exit 1), the same in every run;
    # nothing else may fail
    assert codes["serial"] == codes["ray-cases"] == codes["ray-shards"], codes
    failures = {name: _failures(out) for name, out in outs.items()}
    assert failures["serial"] == failures["ray-cases"] == failures["ray-shards"]
    assert set(failures["serial"].values()) <= {"budget_exceeded"}, failures["serial"]
    assert codes["serial"] == (1 if failures["serial"] else 0)
    printed = capsys.readouterr().err
    assert "shard 2/2 done" in printed                               # the samples really ran in shard tasks
    serial = rows["serial"]
    assert set(serial) == METHODS
    for name in ("ray-cases", "ray-shards"):
        assert set(rows[name]) == METHODS
        for method in serial:
            for m in DETERMINISTIC:
                assert serial[method][m] == rows[name][method][m], (name, method, m, serial[method][m],
                                                                    rows[name][method][m])
    assert serial["none"]["leak_direct"] not in ("", "0")          # the comparison is not between empty values
    assert serial["suppression"]["leak_direct"] == "0"
    # the DP test cases sent noised text (benchmark randomness), identical whichever shard a document ran in
    assert serial["dp_numbers"]["cloud_tokens"] not in ("", "0")
    sent = {name: _sent(out) for name, out in outs.items()}
    for name, out in outs.items():
        # the same per-test-case outputs under the job folder (no predictions in shard folders), and the report
        assert len(list(out.glob("*/*/predictions.jsonl"))) == 5, name
        assert (out / "report.md").exists() and (out / "leaderboard.html").exists()
        # per document: the same noised text sent and the same budget spent, in the original sample order
        assert sent[name] == sent["serial"], name
    # the per-document budget binds: no document spends over its 30.0 cap; one that would have is refused whole
    spent = [v[2] for (method, _), v in sent["serial"].items() if method == "prism_ldp" and v[2]]
    assert spent and max(spent) <= 30.0
    assert 30.0 in spent or "budget_exceeded" in failures["serial"].values()
    # every request recorded before it left, in the algorithm's audit log, whatever the executor
    assert _audit(outs["serial"]) == _audit(outs["ray-shards"]) == _audit(outs["ray-cases"])
    assert not list(outs["ray-shards"].glob("*/*/shard-*/cloud_audit.jsonl"))


def _failures(out):
    """(method, doc_id) -> status of every sample that failed."""
    got = {}
    for path in out.glob("*/*/predictions.jsonl"):
        case = json.loads((path.parent / "test_case.json").read_text())
        method = case["hyperparameters"]["cloudmodel-privacy_method"]
        for line in path.read_text().splitlines():
            rec = json.loads(line)
            if rec.get("status") not in (None, "ok", "completed"):
                got[(method, rec["doc_id"])] = rec["status"]
    return got


def _sent(out):
    """(method, doc_id) -> (position in the predictions, what was sent, pure epsilon spent) for every sample."""
    got = {}
    for path in out.glob("*/*/predictions.jsonl"):
        case = json.loads((path.parent / "test_case.json").read_text())
        method = case["hyperparameters"]["cloudmodel-privacy_method"]
        for pos, line in enumerate(path.read_text().splitlines()):
            rec = json.loads(line)
            res = rec["result"] or {}
            got[(method, rec["doc_id"])] = (pos, json.dumps(res.get("sent_messages")),
                                            (res.get("epsilon_spent") or {}).get("pure"))
    return got


# ---------------------------------------------------------------------------------------------- the pieces
def test_plan_shards_keeps_documents_together_and_order():
    from cloud_edge_privacy.bench.executors import plan_shards

    assert plan_shards(["a", "b", "c"], 2) == [[0, 1], [2]]
    assert plan_shards(["a", "b", "c"], 5) == [[0], [1], [2]]          # never more shards than documents
    assert plan_shards(["a", "a", "b", "c", "a"], 3) == [[0, 1, 4], [2], [3]]  # doc 'a' in one shard, in order
    assert plan_shards([None, None, None, None], 2) == [[0, 1], [2, 3]]  # no doc_id: each sample its own document
    shards = plan_shards([f"d{i}" for i in range(127)], 4)
    assert sorted(i for s in shards for i in s) == list(range(127)) and max(map(len, shards)) == 32


def test_shard_count_and_validation():
    from cloud_edge_privacy.bench.executors import shard_count
    from cloud_edge_privacy.errors import ConfigError

    assert shard_count("auto", 3, 2.0) == 1 and shard_count("auto", 1, 4.0) == 4 and shard_count("auto", 2, 5.0) == 3
    assert shard_count("3", 9, 2.0) == 3
    for bad in ("0", "x", -1):
        with pytest.raises(ConfigError, match="shard-samples"):
            shard_count(bad, 1, 1.0)


def test_shard_samples_needs_ray(tmp_path, in_repo):
    from cloud_edge_privacy.bench.runner import run_job
    from cloud_edge_privacy.errors import ConfigError

    with pytest.raises(ConfigError, match="needs --executor ray"):
        run_job(str(EXAMPLE / "benchmarkingjob_ci.yaml"), shard_samples=2)


def test_per_session_budget_is_never_split():
    from cloud_edge_privacy.bench.ianvs_config import Algorithm, ModuleSpec
    from cloud_edge_privacy.bench.runner import _splittable

    def algo(hps):
        return Algorithm("a", "jointinference", {"cloudmodel": ModuleSpec("cloudmodel", "X", None, hps)}, [])

    assert _splittable(algo({"budget_per_document": {"pure": 1.0}})) == (True, "")
    ok, why = _splittable(algo({"budget_per_session": {"pure": 10.0}}))
    assert not ok and "budget_per_session" in why


def test_merge_audit_logs_in_shard_order(tmp_path):
    from cloud_edge_privacy.bench.executors import merge_audit_logs

    saved = tmp_path / "algo"
    saved.mkdir()
    (saved / "cloud_audit.jsonl").write_text('{"n": 0}\n')          # an earlier test case of the algorithm
    dirs = []
    for k, lines in enumerate(['{"n": 1}\n{"n": 2}\n', '{"n": 3}']):   # the last one lacks its newline
        d = tmp_path / "case" / f"shard-{k}"
        d.mkdir(parents=True)
        (d / "cloud_audit.jsonl").write_text(lines)
        dirs.append(str(d))
    dirs.append(str(tmp_path / "case" / "shard-9"))                  # a shard that sent nothing
    assert merge_audit_logs(dirs, str(saved)) == 3
    assert [json.loads(l)["n"] for l in (saved / "cloud_audit.jsonl").read_text().splitlines()] == [0, 1, 2, 3]
    assert not list((tmp_path / "case").glob("*/cloud_audit.jsonl"))


def test_concurrent_tasks_claim_different_cores():
    import os

    from cloud_edge_privacy.bench.executors import claimed_cores

    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs at least 2 usable cores to claim two different ones")
    got, barrier = [], threading.Barrier(2)

    def task():
        with claimed_cores(1) as cores:
            got.append((tuple(cores), tuple(sorted(os.sched_getaffinity(0)))))
            barrier.wait(timeout=10)
        got.append(("after", tuple(sorted(os.sched_getaffinity(0)))))

    threads = [threading.Thread(target=task) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    claims = [g for g in got if g[0] != "after"]
    assert len(claims) == 2 and claims[0][0] != claims[1][0]           # distinct cores while both ran
    assert all(len(c) == 1 and c == aff for c, aff in claims)          # the thread was pinned to its claim
    assert all(len(aff) == len(os.sched_getaffinity(0)) for tag, aff in got if tag == "after")
