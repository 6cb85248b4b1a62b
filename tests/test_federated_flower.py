"""The federated detector as Flower apps: the same client/server functions as the simulation, run in-process
and as separate SuperLink / SuperNode processes on 127.0.0.1 (flwr is installed by scripts/setup.sh)."""
from __future__ import annotations

import hashlib
import json
import math
import re
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
import torch

from cloud_edge_privacy.errors import ConfigError
from cloud_edge_privacy.federated.flower import require_flwr
from cloud_edge_privacy.federated.flower.core import (NodeInfo, client_round, load_shard, run_server,
                                                      settings_from_config)
from cloud_edge_privacy.federated.model import get_flat, load_model, new_model
from cloud_edge_privacy.federated.simulation import FedConfig, run_method
from cloud_edge_privacy.datasets.tab import load_tab

from conftest import SHARED_TAB

require_flwr()  # an ImportError naming the install command, never a skip: CI installs the federated extra


def _tab_files(tmp_path: Path) -> Tuple[Path, Path]:
    """The real TAB files (6 train / 3 dev documents are used) or, without shared/, a synthetic TAB pair."""
    if (SHARED_TAB / "echr_train.json").is_file() and (SHARED_TAB / "echr_dev.json").is_file():
        return SHARED_TAB / "echr_train.json", SHARED_TAB / "echr_dev.json"
    names = ["John Smith", "Anna Berg", "Ole Hansen", "Maria Lopez", "Peter Kim", "Eva Novak"]
    docs = []
    for i in range(9):
        name = names[i % len(names)]
        text = f"The applicant, {name}, was born in 1970 and lives in Oslo. Case number {i}. " * (3 + i)
        s, c = text.index(name), text.index("1970")
        docs.append({"doc_id": f"d{i}", "text": text, "annotations": {"a1": {"entity_mentions": [
            {"entity_type": "PERSON", "entity_mention_id": "m1", "start_offset": s, "end_offset": s + len(name),
             "span_text": name, "identifier_type": "DIRECT", "entity_id": "e1"},
            {"entity_type": "DATETIME", "entity_mention_id": "m2", "start_offset": c, "end_offset": c + 4,
             "span_text": "1970", "identifier_type": "QUASI", "entity_id": "e2"}]}}})
    train, dev = tmp_path / "train.json", tmp_path / "dev.json"
    train.write_text(json.dumps(docs[:6]))
    dev.write_text(json.dumps(docs[6:]))
    return train, dev


def _smoke_conf(train: Path, dev: Path, **extra: Any) -> Dict[str, Any]:
    # benchmark randomness: reproducible from the seed, so it can be compared with the simulation bit for bit
    return {"smoke": True, "max-train-docs": 6, "max-dev-docs": 3, "train-path": str(train), "dev-path": str(dev),
            "threads": 1, "randomness": "benchmark", **extra}


def _simulated(method: str, epsilon: float, train: Path, rounds: int, n_clients: int) -> Dict[str, Any]:
    """``simulation.run_method`` with the smoke config, one torch thread (as the Flower apps use)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        cfg = replace(FedConfig.smoke(), rounds=rounds, n_clients=n_clients)
        return run_method(method, load_tab(train)[:6], cfg, 0, epsilon)
    finally:
        torch.set_num_threads(threads)


# --- in-process: the apps' plain functions reproduce the simulation ---------------------------------------

@pytest.mark.parametrize("method,epsilon", [("fedadam_ldp_paper", 1.0), ("dp_fedavg", 10.0), ("dp_ftrl", 10.0)])
def test_server_loop_in_process_equals_simulation(tmp_path, method, epsilon):
    train, dev = _tab_files(tmp_path)
    settings = settings_from_config(_smoke_conf(train, dev, method=method, epsilon=epsilon, rounds=2))
    shards = [load_shard(settings, {"partition-id": k, "num-partitions": 3}) for k in range(3)]
    nodes = [NodeInfo(100 + k, k, 3, len(s.windows)) for k, s in enumerate(shards)]
    calls: List[Tuple[int, List[int]]] = []

    def train_round(r, chosen, global_flat, config):
        calls.append((r, [c.partition_id for c in chosen]))
        return [client_round(settings, shards[c.partition_id], global_flat, r, config["delta"]) for c in chosen]

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        result = run_server(settings, nodes, train_round, log=lambda _: None)
    finally:
        torch.set_num_threads(threads)
    sim = _simulated(method, epsilon, train, 2, 3)
    assert calls == [(h["round"], h["clients"]) for h in sim["history"]]
    assert result["weight_change_norm"] > 0
    assert result["privacy"]["epsilon_total_rdp"] == pytest.approx(sim["privacy"]["epsilon_total_rdp"], abs=1e-4)
    if method == "fedadam_ldp_paper":
        assert result["privacy"]["sigma"] == pytest.approx(sim["privacy"]["sigma"], rel=1e-12)
        assert result["privacy"]["epsilon_per_round_paper"] == epsilon
    assert result["final_sha256"] == hashlib.sha256(get_flat(sim["model"]).numpy().tobytes()).hexdigest()
    assert 0.0 <= result["dev"]["PSR"] <= 1.0 and result["dev"]["n_entities"] > 0


def test_settings_validate_method_epsilon_and_paths(tmp_path):
    with pytest.raises(ConfigError, match="federated methods without distillation"):
        settings_from_config({"method": "centralized"})
    with pytest.raises(ConfigError, match="needs a finite"):
        settings_from_config({"method": "fedadam_ldp_accounted", "epsilon": "inf"})
    with pytest.raises(ConfigError, match="unknown run config key"):
        settings_from_config({"method": "fedavg", "round": 3})
    with pytest.raises(ConfigError, match="no privacy budget"):
        settings_from_config({"method": "fedavg", "epsilon": 1.0})
    s = settings_from_config({"smoke": True, "rounds": 4, "epsilon": "inf"})
    assert s.cfg.rounds == 4 and s.cfg.model == FedConfig.smoke().model and math.isinf(s.epsilon)
    with pytest.raises(ConfigError, match="train-path"):
        load_shard(s, {"partition-id": 0, "num-partitions": 2})
    train, _ = _tab_files(tmp_path)
    with pytest.raises(ConfigError, match="partition-id=2 num-partitions=2"):
        load_shard(replace(s, train_path=str(train)), {"partition-id": 2, "num-partitions": 2})


# --- separate processes: SuperLink + 3 SuperNodes on 127.0.0.1 ----------------------------------------

def test_superlink_and_supernodes_train_the_same_model_as_the_simulation(tmp_path):
    from cloud_edge_privacy.federated.flower.launch import LocalFederation, live_group_members

    train, dev = _tab_files(tmp_path)
    rounds, n, eps = 2, 3, 10.0
    t0 = time.perf_counter()
    fed = LocalFederation(tmp_path / "fed")
    with fed:
        try:
            fed.start_superlink()
            for k in range(n):
                fed.start_supernode(k, {"partition-id": k, "num-partitions": n})
            pids = [p.popen.pid for p in fed.procs]
            result = fed.run(_smoke_conf(train, dev, method="fedadam_ldp_accounted", epsilon=eps, rounds=rounds,
                                         **{"num-clients": n, "model-path": str(tmp_path / "model.pt")}),
                             timeout=240)
            node_ids = {int(m.group(1)) for k in range(n) for m in
                        [re.search(r"SuperNode ID: (\d+)", (tmp_path / "fed" / "logs" / f"supernode{k}.log").read_text())]}
            received = [(tmp_path / "fed" / "logs" / f"supernode{k}.log").read_text().count("Receiving: train message")
                        for k in range(n)]
        except BaseException:
            print(fed.log_tails(80))  # shown by pytest for the failed test
            raise
    elapsed = time.perf_counter() - t0
    print(f"SuperLink + {n} SuperNodes, {rounds} rounds: {elapsed:.1f} s")

    # every process we started, and what Flower spawned under it, is gone (teardown killed the process groups)
    assert [live_group_members(pid) for pid in pids] == [[]] * len(pids)
    # every SuperNode (a separate process with its own node id) took part in every round
    assert {int(c["node_id"]) for c in result["clients"].values()} == node_ids and len(node_ids) == n
    assert sorted(result["clients"]) == [str(k) for k in range(n)]
    assert [h["partitions"] for h in result["history"]] == [list(range(n))] * rounds
    assert all(s > 0 for h in result["history"] for s in h["num_samples"])
    assert received == [rounds] * n
    # the global model moved, and is exactly the in-process simulation's model (same functions, same seeds)
    assert result["weight_change_norm"] > 0
    sim = _simulated("fedadam_ldp_accounted", eps, train, rounds, n)
    model, meta = load_model(str(tmp_path / "model.pt"))
    assert torch.equal(get_flat(model), get_flat(sim["model"]))
    assert meta["method"] == "fedadam_ldp_accounted" and meta["trained_with"] == "flower"
    # the accounted epsilon over all rounds is reported and meets the target
    priv = result["privacy"]
    assert priv["rounds_accounted"] == rounds and priv["sigma"] == pytest.approx(sim["privacy"]["sigma"], rel=1e-12)
    assert eps - 0.05 <= priv["epsilon_total_rdp"] <= eps + 1e-6
    # the final model was evaluated on TAB dev by the ServerApp
    assert result["dev"]["n_docs"] == 3 and result["dev"]["n_entities"] > 0
    assert 0.0 <= result["dev"]["PSR"] <= 1.0 and 0.0 <= result["dev"]["token_precision"] <= 1.0


def test_deployment_randomness_draws_noise_no_one_can_recompute(tmp_path):
    """Benchmark mode: the same seed gives the same noisy update. Deployment mode: it does not."""
    train, dev = _tab_files(tmp_path)
    updates = {}
    for mode in ("benchmark", "deployment"):
        s = settings_from_config(_smoke_conf(train, dev, method="fedadam_ldp_accounted", epsilon=10.0,
                                             randomness=mode))
        shard = load_shard(s, {"partition-id": 0, "num-partitions": 2})
        flat = torch.zeros_like(get_flat(new_model(s.cfg.model, 0)))
        updates[mode] = [client_round(s, shard, flat, 0, 1e-3)[0] for _ in range(2)]
    assert torch.equal(*updates["benchmark"])
    assert not torch.equal(*updates["deployment"])
    with pytest.raises(ConfigError, match="randomness"):
        settings_from_config({"randomness": "seeded"})


def test_stop_waits_for_killed_processes_that_exit_slowly(tmp_path, monkeypatch):
    """A killed grandchild (SuperExec, a ClientApp holding torch) can take a while to exit under load; ``stop`` looks
    again instead of reporting it at once (seen once in a fresh-clone run), and still reports one that never exits."""
    import subprocess
    import sys

    from cloud_edge_privacy.federated.flower import launch

    def federation():
        fed = launch.LocalFederation(tmp_path / "fed")
        popen = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
        fed.procs.append(launch._Proc("stand-in", popen, tmp_path / "stand-in.log"))
        return fed

    looks = []

    def slow(pgid):  # a grandchild that the process table still shows for the first three looks
        looks.append(pgid)
        return [424242] if len(looks) <= 3 else []

    monkeypatch.setattr(launch, "live_group_members", slow)
    federation().stop(grace=0.1)
    assert len(looks) == 4

    monkeypatch.setattr(launch, "live_group_members", lambda pgid: [424242])
    monkeypatch.setattr(launch, "KILL_SETTLE_S", 0.3)
    with pytest.raises(RuntimeError, match="424242"):
        federation().stop(grace=0.1)
