"""The federated wing as composition (methods.py), DP-FTRL's tree aggregation and accounting, PSR in one place,
and the frozen-MiniLM detector (real all-MiniLM-L6-v2 from PyPI)."""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
import torch

from cloud_edge_privacy.federated import dp
from cloud_edge_privacy.federated.methods import METHODS, NAMED, Method, client_seed, parse_method
from cloud_edge_privacy.federated.model import ModelConfig, load_model, make_windows, new_model, predict_spans, save_model
from cloud_edge_privacy.federated.privacy import client_mechanism, make_aggregator, run_report
from cloud_edge_privacy.federated.server import DPFTRLServer, FedAvgServer
from cloud_edge_privacy.federated.simulation import FedConfig, run_method
from cloud_edge_privacy.metrics.psr import psr_scores
from cloud_edge_privacy.datasets.tab import parse_tab_documents


def _docs(n: int):
    names = ["John Smith", "Anna Berg", "Ole Hansen", "Maria Lopez", "Peter Kim", "Eva Novak"]
    raws = []
    for i in range(n):
        name = names[i % len(names)]
        text = f"The applicant, {name}, was born in 1970 and lives in Oslo. Case number {i}."
        s, c = text.index(name), text.index("1970")
        raws.append({"doc_id": f"d{i}", "text": text, "annotations": {"a1": {"entity_mentions": [
            {"entity_type": "PERSON", "entity_mention_id": "m1", "start_offset": s, "end_offset": s + len(name),
             "span_text": name, "identifier_type": "DIRECT", "entity_id": "e1"},
            {"entity_type": "DATETIME", "entity_mention_id": "m2", "start_offset": c, "end_offset": c + 4,
             "span_text": "1970", "identifier_type": "QUASI", "entity_id": "e2"}]}}})
    return parse_tab_documents(raws)


# --- composition -----------------------------------------------------------------------------------------

def test_named_methods_are_compositions_and_new_ones_parse():
    assert NAMED["privateai"] == Method("privateai", "federated", "fedadam", "ldp_accounted", True, True)
    assert NAMED["dp_ftrl"].privacy == "tree" and NAMED["dp_ftrl"].aggregator == "fedavg"
    m = parse_method("fedavg+ldp_accounted+kd")
    assert (m.layout, m.aggregator, m.privacy, m.distill) == ("federated", "fedavg", "ldp_accounted", True)
    assert parse_method("fedadam").privacy == "none" and "dp_ftrl" in METHODS
    for bad in ("fedadam+tree", "fedprox", "fedavg+laplace", "fedavg+dpsgd+kd+x"):
        with pytest.raises(ValueError):
            parse_method(bad)


def test_epsilon_rules_follow_the_privacy_mechanism():
    parse_method("dp_ftrl").check_epsilon(10.0)
    with pytest.raises(ValueError, match="finite"):
        parse_method("dp_ftrl").check_epsilon(math.inf)
    with pytest.raises(ValueError, match="no privacy budget"):
        parse_method("fedavg").check_epsilon(1.0)
    parse_method("privateai").check_epsilon(math.inf)  # optional budget: ∞ = no noise


def test_one_seed_rule_and_one_calibration_for_every_path():
    assert client_seed(2, 3, 5) == 2 * 100003 + 3 * 101 + 5
    cfg = FedConfig()
    a = client_mechanism(parse_method("fedadam_ldp_accounted"), 10.0, cfg, 50, 0.02)
    b = client_mechanism(parse_method("privateai"), 10.0, cfg, 50, 0.02)
    assert a.local_dp == b.local_dp and a.local_dp is not None and a.dpsgd is None
    assert client_mechanism(parse_method("privateai"), math.inf, cfg, 50, 0.02).local_dp is None
    rep = run_report(parse_method("fedadam_ldp_accounted"), 10.0, cfg, [50, 80])
    assert rep["epsilon_total_rdp"] == pytest.approx(10.0, rel=0.01) and rep["delta"] == 1 / 50


# --- DP-FTRL ---------------------------------------------------------------------------------------------

def test_tree_nodes_cover_each_prefix_with_few_nodes():
    for t in range(1, 17):
        nodes = dp._prefix_nodes(t)
        covered = sorted(r for lvl, i in nodes for r in range(i << lvl, (i + 1) << lvl))
        assert covered == list(range(t)) and len(nodes) == bin(t).count("1")
    # only released nodes count: 2 rounds release leaf 0 and the pair [0, 1] (leaf 1 alone is never released)
    assert dp.tree_sensitivity_factor(1) == 1.0
    assert dp.tree_sensitivity_factor(2) == pytest.approx(math.sqrt(1 + 4))
    assert dp.tree_sensitivity_factor(3) == pytest.approx(math.sqrt(1 + 4 + 1))


def test_ftrl_calibration_meets_the_target_and_grows_with_rounds():
    c10 = dp.ftrl_noise(10.0, 1e-3, 10, 1.0)
    c1 = dp.ftrl_noise(1.0, 1e-3, 10, 1.0)
    assert c10.epsilon_total <= 10.0 + 1e-6 and c10.epsilon_total > 9.9
    assert c1.scale > c10.scale
    assert dp.ftrl_noise(10.0, 1e-3, 20, 1.0).scale > c10.scale


def test_dpftrl_server_without_noise_is_fedavg_of_clipped_updates():
    init = torch.zeros(4)
    server = DPFTRLServer(init, clip=1.0, noise_multiplier=0.0, clients_per_round=2, lr=1.0,
                          generator=torch.Generator().manual_seed(0))
    u1, u2 = torch.tensor([3.0, 4.0, 0.0, 0.0]), torch.tensor([0.0, 0.0, 0.5, 0.0])  # norms 5 (clipped) and 0.5
    g1 = server.step(init, [(u1, 10.0), (u2, 1.0)])
    assert torch.allclose(g1, (u1 / 5 + u2) / 2)
    g2 = server.step(g1, [(u2, 1.0)])
    assert torch.allclose(g2, (u1 / 5 + 2 * u2) / 2)
    noisy = DPFTRLServer(init, 1.0, 1.0, 2, 1.0, torch.Generator().manual_seed(0))
    assert not torch.allclose(noisy.step(init, [(u2, 1.0)]), u2 / 2)


def test_make_aggregator_wraps_fedavg_for_dp_ftrl_only():
    cfg = FedConfig()
    flat = torch.zeros(3)
    assert isinstance(make_aggregator(parse_method("dp_ftrl"), 10.0, cfg, flat, torch.Generator()), DPFTRLServer)
    assert isinstance(make_aggregator(parse_method("dp_fedavg"), 10.0, cfg, flat, torch.Generator()), FedAvgServer)


def test_dp_ftrl_run_reports_accounted_epsilon():
    cfg = replace(FedConfig.smoke(), n_clients=3)
    run = run_method("dp_ftrl", _docs(6), cfg, 0, 10.0)
    p = run["privacy"]
    assert p["epsilon_total_rdp"] == pytest.approx(10.0, rel=0.01) and p["tree_sensitivity_factor"] > 1
    assert "add/remove" in p["unit"]


# --- PSR -------------------------------------------------------------------------------------------------

def test_psr_counts_entities_with_all_mentions_masked():
    gold = {"text": "Ann met Bob.", "annotations": {"a": [
        {"entity_type": "PERSON", "entity_mention_id": "1", "start_offset": 0, "end_offset": 3, "span_text": "Ann",
         "identifier_type": "DIRECT", "entity_id": "e1"},
        {"entity_type": "PERSON", "entity_mention_id": "2", "start_offset": 8, "end_offset": 11, "span_text": "Bob",
         "identifier_type": "QUASI", "entity_id": "e2"}]}}
    assert psr_scores([gold], [[[0, 3]]])["PSR"] == 0.5
    res = psr_scores([gold], [[[0, 11]]])
    assert res["PSR"] == 1.0 and res["token_precision"] < 1.0 and res["n_entities"] == 2
    with pytest.raises(ValueError):
        psr_scores([gold], [])


# --- the frozen-MiniLM detector --------------------------------------------------------------------------

def test_minilm_features_are_contextual_and_the_head_is_small(tmp_path, monkeypatch):
    monkeypatch.setenv("CEP_CACHE_DIR", str(tmp_path / "cache"))
    cfg = replace(ModelConfig.minilm(), window=16)
    docs = _docs(2)
    w = make_windows(docs, cfg)
    assert w.x.dtype == torch.float32 and w.x.shape[2] == 385
    valid = w.y != -100
    assert (w.x[..., 1:][valid].abs().sum(-1) > 0).all()  # every real token got a MiniLM vector
    # "applicant" in two different sentences: same word, contextual vectors differ slightly between documents
    assert not torch.equal(w.x[0], w.x[2])
    cached = list((tmp_path / "cache" / "federated_minilm").glob("*.npy"))
    assert len(cached) == 2
    model = new_model(cfg, 0)
    n_head = sum(p.numel() for p in model.parameters())
    n_cnn = sum(p.numel() for p in new_model(ModelConfig(), 0).parameters())
    assert n_head < 40_000 < 300_000 < n_cnn
    # the recognizer path keeps user text off the disk
    predict_spans(model, "A new sentence about Karl Olsen in Bergen.", cache=False)
    assert len(list((tmp_path / "cache" / "federated_minilm").glob("*.npy"))) == 2
    path = tmp_path / "m.pt"
    save_model(model, str(path), {"method": "fedavg"})
    loaded, meta = load_model(str(path))
    assert loaded.cfg.kind == "minilm" and meta["method"] == "fedavg"
    x = w.x[:1]
    assert torch.equal(loaded(x), model(x))


def test_minilm_fedavg_learns_on_synthetic_documents(tmp_path, monkeypatch):
    monkeypatch.setenv("CEP_CACHE_DIR", str(tmp_path / "cache"))
    cfg = replace(FedConfig.smoke("minilm"), n_clients=3, rounds=4, lr=1e-2)
    docs = _docs(9)
    run = run_method("fedavg", docs[:6], cfg, 0)
    from cloud_edge_privacy.federated.simulation import evaluate_psr

    ev = evaluate_psr(run["model"], docs[6:], 0.5)
    untrained = evaluate_psr(new_model(cfg.model, 0), docs[6:], 0.5)
    # the untrained head tags (almost) everything; the trained one finds entities with better precision
    assert ev["PSR"] >= 0.5 and ev["token_precision"] > untrained["token_precision"]
    assert np.isfinite(ev["token_precision"])
