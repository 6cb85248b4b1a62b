"""Federated privacy detector: DP calibration and accounting, aggregation, partition, model, MIA, recognizer, runner."""
from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest
import torch

from cloud_edge_privacy.errors import ConfigError, ModelFileError
from cloud_edge_privacy.federated import dp
from cloud_edge_privacy.federated.mia import roc_auc, tpr_at_fpr
from cloud_edge_privacy.federated.model import (LABELS, ModelConfig, get_flat, make_windows, new_model, predict_spans,
                                                save_model, set_flat, tokenize, train_epochs)
from cloud_edge_privacy.federated.server import FedAdamServer, FedAvgServer
from cloud_edge_privacy.federated.simulation import dirichlet_partition, run_method, select_clients
from cloud_edge_privacy.datasets.tab import parse_tab_documents

ROOT = Path(__file__).resolve().parents[1]
SMALL = ModelConfig(word_buckets=256, affix_buckets=64, shape_buckets=32, dim=8, hidden=16, window=32)


def _doc(i: int, name: str = "John Smith") -> dict:
    text = f"The applicant, {name}, was born in 1970 and lives in Oslo. Case number {i}."
    s = text.index(name)
    c = text.index("1970")
    return {"doc_id": f"d{i}", "text": text, "annotations": {"a1": {"entity_mentions": [
        {"entity_type": "PERSON", "entity_mention_id": "m1", "start_offset": s, "end_offset": s + len(name),
         "span_text": name, "identifier_type": "DIRECT", "entity_id": "e1"},
        {"entity_type": "DATETIME", "entity_mention_id": "m2", "start_offset": c, "end_offset": c + 4,
         "span_text": "1970", "identifier_type": "QUASI", "entity_id": "e2"}]}}}


def _docs(n: int):
    names = ["John Smith", "Anna Berg", "Ole Hansen", "Maria Lopez", "Peter Kim", "Eva Novak"]
    return parse_tab_documents([_doc(i, names[i % len(names)]) for i in range(n)])


# --- DP -------------------------------------------------------------------------------------------

def test_paper_sigma_formula():
    assert dp.paper_sigma(1.0, 1e-5, 1.0) == pytest.approx(math.sqrt(8 * math.log(1.25e5)))
    assert dp.paper_sigma(10.0, 1e-5) == pytest.approx(dp.paper_sigma(1.0, 1e-5) / 10)
    with pytest.raises(ValueError):
        dp.paper_sigma(0.0, 1e-5)


def test_analytic_gaussian_meets_delta_and_is_tight():
    s = dp.analytic_gaussian_sigma(1.0, 1e-5, 2.0)
    assert dp.gaussian_delta(s, 2.0, 1.0) <= 1e-5
    assert dp.gaussian_delta(s * 0.99, 2.0, 1.0) > 1e-5
    # the exact calibration needs less noise than the classic one at eps = 1
    assert s < 2.0 * math.sqrt(2 * math.log(1.25 / 1e-5)) / 1.0


def test_rounds_composition_grows_and_calibration_hits_target():
    e1 = dp.gaussian_rounds_epsilon(2.0, 1, 1e-5)
    e10 = dp.gaussian_rounds_epsilon(2.0, 10, 1e-5)
    assert e10 > e1 * 2
    sigma = dp.calibrate_rounds_sigma(3.0, 1e-5, 10, sensitivity=2.0)
    assert dp.gaussian_rounds_epsilon(sigma / 2.0, 10, 1e-5) == pytest.approx(3.0, rel=0.02)
    # the paper's per-round epsilon = 10 is far more than 10 over 10 rounds
    sp = dp.paper_sigma(10.0, 1e-5, 1.0)
    assert dp.gaussian_rounds_epsilon(sp / 2.0, 10, 1e-5) > 20


def test_clip_and_noise_clips_and_noises():
    g = torch.Generator().manual_seed(0)
    u = torch.ones(10000) * 5
    out, norm = dp.clip_and_noise(u, 1.0, 0.0, g)
    assert norm == pytest.approx(500.0)
    assert float(out.norm()) == pytest.approx(1.0, rel=1e-5)
    out2, _ = dp.clip_and_noise(u, 1.0, 0.5, g)
    assert float((out2 - out).std()) == pytest.approx(0.5, rel=0.05)


# --- server, partition --------------------------------------------------------------------------

def test_fedavg_weighted_mean_and_fedadam_eq5():
    g = torch.zeros(2)
    new = FedAvgServer(1.0).step(g, [(torch.tensor([1.0, 0.0]), 3.0), (torch.tensor([0.0, 1.0]), 1.0)])
    assert torch.allclose(new, torch.tensor([0.75, 0.25]))
    srv = FedAdamServer(lr=0.1)
    d = torch.tensor([2.0, -4.0])
    new = srv.step(g, [(d, 1.0), (d, 5.0)])  # unweighted mean = d
    G = 0.1 * d
    k = 0.001 * d * d
    assert torch.allclose(new, 0.1 * G / torch.sqrt(k + 1e-8))


def test_dirichlet_partition_covers_all_and_skews_with_small_alpha():
    p = dirichlet_partition(90, 6, 0.1, seed=0)
    assert sorted(i for part in p for i in part) == list(range(90))
    assert all(len(part) >= 1 for part in p)
    sizes_small = sorted(len(x) for x in p)
    sizes_big = sorted(len(x) for x in dirichlet_partition(90, 6, 100.0, seed=0))
    assert sizes_small[-1] - sizes_small[0] > sizes_big[-1] - sizes_big[0]
    assert dirichlet_partition(90, 6, 1.0, seed=3) == dirichlet_partition(90, 6, 1.0, seed=3)
    with pytest.raises(ValueError):
        dirichlet_partition(3, 6, 1.0, 0)


def test_select_clients_80_percent_deterministic():
    a = select_clients(10, 0.8, 3, seed=1)
    assert len(a) == 8 and len(set(a)) == 8
    assert a == select_clients(10, 0.8, 3, seed=1)


# --- model ------------------------------------------------------------------------------------------

def test_tokenize_offsets_and_windows_labels():
    docs = _docs(2)
    offs = tokenize(docs[0].text)
    assert all(docs[0].text[s:e].strip() for s, e in offs)
    w = make_windows(docs, SMALL)
    assert w.x.shape[1:] == (32, 4)
    labs = set(int(v) for v in w.y.flatten() if v >= 0)
    assert LABELS.index("PERSON") in labs and LABELS.index("DATETIME") in labs and 0 in labs


def test_flat_roundtrip_and_training_learns():
    docs = _docs(12)
    m = new_model(SMALL, 0)
    flat = get_flat(m)
    m2 = new_model(SMALL, 1)
    set_flat(m2, flat)
    assert torch.equal(get_flat(m2), flat)
    with pytest.raises(ValueError):
        set_flat(m2, torch.zeros(3))
    w = make_windows(docs, SMALL)
    first = train_epochs(m, w, epochs=1, lr=1e-2, batch_size=4, generator=torch.Generator().manual_seed(0))
    last = train_epochs(m, w, epochs=30, lr=1e-2, batch_size=4, generator=torch.Generator().manual_seed(0))
    assert last < first * 0.5
    spans = predict_spans(m, "The applicant, Ole Hansen, was born in 1970 and lives in Oslo.")
    assert any(s.category == "PERSON" and "Hansen" in "The applicant, Ole Hansen, was born in 1970 and lives in Oslo."[s.start:s.end]
               for s in spans)


def test_run_method_validates_epsilon_and_reports_accounting():
    docs = _docs(6)
    from cloud_edge_privacy.federated.simulation import FedConfig

    cfg = FedConfig(n_clients=2, rounds=2, model=SMALL)
    with pytest.raises(ValueError):
        run_method("fedadam_ldp_paper", docs, cfg, 0, math.inf)
    with pytest.raises(ValueError):
        run_method("fedavg", docs, cfg, 0, 1.0)
    r = run_method("fedadam_ldp_paper", docs, cfg, 0, 10.0)
    p = r["privacy"]
    assert p["epsilon_per_round_paper"] == 10.0 and p["epsilon_total_rdp"] > 10.0
    r2 = run_method("fedadam_ldp_accounted", docs, cfg, 0, 1.0)
    assert r2["privacy"]["epsilon_total_rdp"] == pytest.approx(1.0, rel=0.02)
    r3 = run_method("dp_fedavg", docs, cfg, 0, 10.0)
    assert r3["privacy"]["epsilon_total_rdp"] < 10.5 and all(z > 0 for z in r3["privacy"]["noise_multipliers"])


# --- MIA ---------------------------------------------------------------------------------------------

def test_auc_and_tpr():
    assert roc_auc(np.array([3.0, 4.0]), np.array([1.0, 2.0])) == 1.0
    assert roc_auc(np.array([1.0, 2.0]), np.array([1.0, 2.0])) == 0.5
    non = np.arange(100, dtype=float)
    # threshold 98: exactly one non-member (99) above it = 1% FPR; members 99.5 and 98.5 pass
    assert tpr_at_fpr(np.array([99.5, 98.5, 50.0]), non, 0.01) == pytest.approx(2 / 3)
    assert tpr_at_fpr(np.array([97.0]), non, 0.01) == 0.0


# --- recognizer ----------------------------------------------------------------------------------

def test_recognizer_missing_model_names_command(tmp_path):
    from cloud_edge_privacy.federated.recognizer import FederatedRecognizer

    with pytest.raises(ModelFileError, match="run_federated_bench.py"):
        FederatedRecognizer(str(tmp_path))


def test_recognizer_loads_and_returns_tab_spans(tmp_path):
    from cloud_edge_privacy.federated.recognizer import MODEL_FILE, FederatedRecognizer

    m = new_model(SMALL, 0)
    train_epochs(m, make_windows(_docs(12), SMALL), epochs=30, lr=1e-2, batch_size=4, generator=torch.Generator().manual_seed(0))
    save_model(m, str(tmp_path / MODEL_FILE), {"method": "test", "threshold": 0.5})
    rec = FederatedRecognizer(str(tmp_path))
    assert rec.name == "federated"
    spans = rec.analyze("The applicant, Anna Berg, was born in 1970.")
    assert spans and all(s.category in LABELS[1:] and s.source == "federated" for s in spans)
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / MODEL_FILE).write_bytes(b"not a model")
    with pytest.raises(ModelFileError):
        FederatedRecognizer(str(tmp_path / "bad"))


# --- Ianvs modules and runner -----------------------------------------------------------------

def test_ianvs_runner_smoke(tmp_path, monkeypatch):
    import json

    from cloud_edge_privacy.federated.ianvs_modules import to_record
    from cloud_edge_privacy.federated.ianvs_runner import run_federated_job

    ex = ROOT / "examples" / "TAB" / "federated_privacy_detector_bench"
    data = tmp_path / "examples" / "TAB" / "federated_privacy_detector_bench" / "data"
    data.mkdir(parents=True)
    docs = _docs(6)
    for name, ds in (("tab_train_smoke.jsonl", docs[:4]), ("tab_dev_smoke.jsonl", docs[4:])):
        (data / name).write_text("".join(json.dumps(to_record(d)) + "\n" for d in ds))
    for sub in ("testenv", "testalgorithms"):
        (data.parent / sub).symlink_to(ex / sub)
    (data.parent / "benchmarkingjob_smoke.yaml").symlink_to(ex / "benchmarkingjob_smoke.yaml")
    # the privateai aggregator distils from a saved teacher record over public background text
    text = "HEADER\nThe applicant, Mr Karl Public, complained on 4 June 2010 about the Oslo City Court."
    (tmp_path / "bk").mkdir()
    (tmp_path / "bk" / "background_knowledge.json").write_text(json.dumps({"x1": text}))
    (data.parent / "results").mkdir()
    (data.parent / "results" / "teacher_labels.json").write_text(json.dumps({
        "passages": [{"pid": "x1:7", "source": "x1", "start": 7, "end": len(text)}],
        "records": [{"passage_id": "x1:7", "answer": '[{"text": "Karl Public", "type": "PERSON"}]'}]}))
    monkeypatch.setenv("CEP_TAB_DIR", str(tmp_path / "bk"))
    monkeypatch.chdir(tmp_path)
    res = run_federated_job("examples/TAB/federated_privacy_detector_bench/benchmarkingjob_smoke.yaml", smoke=True, progress=False)
    assert sorted(r["algorithm"] for r in res["rows"]) == ["dp-ftrl", "fedadam-ldp-accounted", "fedavg", "privateai"]
    for r in res["rows"]:
        assert 0.0 <= r["fed_psr"] <= 1.0 and 0.0 <= r["fed_token_precision"] <= 1.0
    assert os.path.isfile(res["rank_file"])


def test_ianvs_runner_rejects_jointinference_algorithm(tmp_path):
    from cloud_edge_privacy.federated.ianvs_runner import _load_fl_algorithm

    p = tmp_path / "a.yaml"
    p.write_text("algorithm:\n  paradigm_type: jointinference\n  modules: []\n")
    with pytest.raises(ConfigError, match="federatedlearning"):
        _load_fl_algorithm(str(p))


def test_aggregator_skips_unsampled_clients():
    from cloud_edge_privacy.federated.ianvs_modules import DetectorAggregator

    class C:
        def __init__(self, n, base, up):
            self.num_samples, self.weights = n, {"base": base, "update": up}

    base = np.zeros(3, dtype=np.float32)
    agg = DetectorAggregator("fedavg")
    out = agg.aggregate([C(2, base, np.ones(3, dtype=np.float32)), C(0, base, None)])
    assert np.allclose(out[0], 1.0)
    assert np.allclose(DetectorAggregator("fedavg").aggregate([C(0, base, None)])[0], 0.0)


def test_ianvs_aggregator_dp_ftrl_is_the_simulation_server():
    """privacy: tree in the Ianvs aggregation module = make_aggregator's DPFTRLServer with the simulation's seed."""
    from cloud_edge_privacy.federated.ianvs_modules import DetectorAggregator
    from cloud_edge_privacy.federated.methods import parse_method
    from cloud_edge_privacy.federated.privacy import make_aggregator
    from cloud_edge_privacy.federated.simulation import FedConfig

    class C:
        def __init__(self, n, base, up):
            self.num_samples, self.weights = n, {"base": base, "update": up}

    rng = np.random.default_rng(0)
    base = rng.normal(size=50).astype(np.float32)
    rounds = [[rng.normal(size=50).astype(np.float32) * 3 for _ in range(2)] for _ in range(3)]
    agg = DetectorAggregator("fedavg", privacy="tree", epsilon=10.0, rounds=3, client_number=2, participation=1.0,
                             seed=4)
    assert agg.privacy["epsilon_total_rdp"] <= 10.0 and agg.privacy["rounds_accounted"] == 3
    cfg = FedConfig(rounds=3, n_clients=2, participation=1.0)
    ref = make_aggregator(parse_method("dp_ftrl"), 10.0, cfg, torch.as_tensor(base), torch.Generator().manual_seed(4 * 7 + 3))
    g = base
    for ups in rounds:
        out = agg.aggregate([C(5, g, ups[0]), C(0, g, None), C(7, g, ups[1])])[0]
        want = ref.step(torch.as_tensor(g), [(torch.as_tensor(u), 1.0) for u in ups]).numpy()
        assert np.array_equal(out, want)
        g = out
    with pytest.raises(ValueError, match="rounds=3"):  # a 4th release would exceed the accounted budget
        agg.aggregate([C(5, g, rounds[0][0])])
    # the tree noise is there (z > 0): without it the result would be the clipped mean of the updates
    plain = base + sum(u * min(1.0, 1.0 / np.linalg.norm(u)) for r in rounds for u in r) / 2
    assert not np.allclose(g, plain, atol=1e-3)
    dep = [DetectorAggregator("fedavg", privacy="tree", epsilon=10.0, rounds=3, client_number=2, participation=1.0,
                              randomness="deployment").aggregate([C(5, base, rounds[0][0])])[0] for _ in range(2)]
    assert not np.array_equal(dep[0], dep[1])  # noise from the OS CSPRNG, not from the seed
    for bad in ({"kind": "fedadam", "privacy": "tree", "epsilon": 10.0}, {"privacy": "tree"},
                {"privacy": "dpsgd", "epsilon": 1.0}, {"privacy": "tree", "epsilon": 1.0, "randomness": "x"}):
        with pytest.raises(ValueError):
            DetectorAggregator(**bad)


def test_bench_script_smoke_writes_table(tmp_path):
    import importlib.util
    import json

    spec = importlib.util.spec_from_file_location("run_federated_bench", ROOT / "scripts" / "run_federated_bench.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    data = tmp_path / "tab"
    data.mkdir()
    raw = [_doc(i, n) for i, n in enumerate(["John Smith", "Anna Berg", "Ole Hansen", "Maria Lopez", "Peter Kim", "Eva Novak"] * 2)]
    (data / "train.json").write_text(json.dumps(raw[:9]))
    (data / "dev.json").write_text(json.dumps(raw[9:]))
    out = tmp_path / "out"
    rc = mod.main(["--smoke", "--train", str(data / "train.json"), "--dev", str(data / "dev.json"), "--out", str(out),
                   "--methods", "fedavg", "fedadam_ldp_accounted", "--epsilons", "1", "--threads", "1"])
    assert rc == 0
    blob = json.loads((out / "grid_rows.json").read_text())
    assert blob["meta"]["complete"] is True
    for kind in ("minilm", "hashed_cnn"):  # both model families by default
        rows = sorted((r for r in blob["rows"] if r["model"] == kind), key=lambda r: r["method"] != "fedavg")
        assert [(r["method"], r["epsilon"]) for r in rows] == [("fedavg", math.inf), ("fedadam_ldp_accounted", 1.0)]
        assert rows[1]["privacy"]["epsilon_total_rdp"] == pytest.approx(1.0, rel=0.02)
    md = (out / "grid.md").read_text()
    assert "| hashed_cnn | fedadam_ldp_accounted | 1.0 |" in md and "| minilm | fedavg | inf |" in md


def test_lira_offline_scores_rank_members_above_out_reference():
    from cloud_edge_privacy.federated.mia import lira_offline_scores

    target = np.array([0.1, 0.9, 0.5])
    outs = [[0.8, 1.0], [0.9], []]
    sc = lira_offline_scores(target, outs, 0.5)
    assert sc[0] == pytest.approx((0.9 - 0.1) / 0.5)
    assert sc[1] == pytest.approx(0.0)
    assert math.isnan(sc[2])  # no OUT reference
