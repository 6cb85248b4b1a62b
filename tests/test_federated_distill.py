"""Knowledge distillation of the federated detector: fusion and confidence filter, teacher answers and their
mapping to tokens, the teacher's cache, the public proxy set, the new methods and LiRA."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from cloud_edge_privacy.federated.distill import (KDConfig, Passage, build_proxy_set, chunk_spans, confident_targets,
                                                  fuse, kd_step, one_hot, proxy_passages, teacher_summary)
from cloud_edge_privacy.federated.model import LABELS, ModelConfig, new_model, tokenize
from cloud_edge_privacy.federated.teacher import (TeacherLabeller, map_items_to_tokens, parse_teacher_answer,
                                                  result_from_answer, teacher_messages)
from cloud_edge_privacy.datasets.tab import parse_tab_documents

ROOT = Path(__file__).resolve().parents[1]
SMALL = ModelConfig(word_buckets=256, affix_buckets=64, shape_buckets=32, dim=8, hidden=16, window=32)
PER, DAT = LABELS.index("PERSON"), LABELS.index("DATETIME")
NAMES = ["John Smith", "Anna Berg", "Ole Hansen", "Maria Lopez", "Peter Kim", "Eva Novak"]


def _doc(i: int, name: str) -> dict:
    text = f"The applicant, {name}, was born in 1970 and lives in Oslo. Case number {i}."
    s, c = text.index(name), text.index("1970")
    return {"doc_id": f"d{i}", "text": text, "annotations": {"a1": {"entity_mentions": [
        {"entity_type": "PERSON", "entity_mention_id": "m1", "start_offset": s, "end_offset": s + len(name),
         "span_text": name, "identifier_type": "DIRECT", "entity_id": "e1"},
        {"entity_type": "DATETIME", "entity_mention_id": "m2", "start_offset": c, "end_offset": c + 4,
         "span_text": "1970", "identifier_type": "QUASI", "entity_id": "e2"}]}}}


def _bk(text: str) -> str:
    """A background entry: a header chunk of its own, then ``text`` (the header chunk is never a passage)."""
    return "HEADER " + " ".join(["filler"] * 98) + "\n" + text


def _public_text(i: int) -> str:
    return (f"JUDGMENT {i}\nIn the case of Case{i} v. Norway the Court sat.\n"
            f"{i}. The applicant, Mr Karl Public{i}, complained on 4 June 2010 that the Oslo City Court had refused "
            f"his claim of EUR {i}000 and that the proceedings had lasted for seven years in total, which he "
            f"considered excessive under Article 6 of the Convention.")


# --- fusion and the confidence filter ----------------------------------------------------------------------

def test_fusion_is_half_teacher_half_model_and_filter_keeps_confident_agreement():
    C = len(LABELS)
    model = torch.full((1, 4, C), 0.0)
    model[0, 0, 0] = 0.85          # token 0: model says O with 0.85, teacher O      -> fused 0.925 kept (O)
    model[0, 0, PER] = 0.15
    model[0, 1, PER] = 0.7         # token 1: model PERSON 0.7, teacher PERSON       -> fused 0.85 dropped
    model[0, 1, 0] = 0.3
    model[0, 2, PER] = 0.95        # token 2: model PERSON 0.95, teacher DATETIME    -> max 0.5 dropped
    model[0, 2, 0] = 0.05
    model[0, 3, DAT] = 1.0         # token 3: padding (-100)                          -> never kept
    teacher_ids = torch.tensor([[0, PER, DAT, -100]])
    t = one_hot(teacher_ids)
    assert t[0, 3].sum() == 0 and t[0, 1, PER] == 1
    f = fuse(model, t, 0.5)
    assert f[0, 0, 0] == pytest.approx(0.925) and f[0, 1, PER] == pytest.approx(0.85)
    assert f[0, 2].max() == pytest.approx(0.5)  # DATETIME 0.5 (teacher), PERSON 0.475 (model)
    targets = confident_targets(f, 0.9, teacher_ids != -100)
    assert targets.tolist() == [[0, -100, -100, -100]]
    # a lower threshold keeps the agreeing PERSON token with the fused arg-max label
    assert confident_targets(f, 0.8, teacher_ids != -100).tolist() == [[0, PER, -100, -100]]


def test_fusion_rejects_bad_shapes_and_weights():
    with pytest.raises(ValueError, match="shape"):
        fuse(torch.zeros(2, 3), torch.zeros(2, 4))
    with pytest.raises(ValueError, match="teacher_weight"):
        fuse(torch.zeros(2, 3), torch.zeros(2, 3), 1.5)


def test_fused_rows_stay_distributions():
    g = torch.Generator().manual_seed(0)
    p = torch.softmax(torch.randn(3, 5, len(LABELS), generator=g), -1)
    t = one_hot(torch.randint(0, len(LABELS), (3, 5), generator=g))
    assert torch.allclose(fuse(p, t).sum(-1), torch.ones(3, 5))


# --- teacher answers --------------------------------------------------------------------------------------

@pytest.mark.parametrize("answer,expected", [
    ('[{"text": "John Smith", "type": "PERSON"}, {"text": "1970", "type": "DATETIME"}]',
     [("John Smith", "PERSON"), ("1970", "DATETIME")]),
    ('```json\n[{"text": "Oslo", "type": "LOC"}]\n```', [("Oslo", "LOC")]),
    ('Here you go: [{"text": "Oslo", "type": "city"}] hope it helps', [("Oslo", "MISC")]),
    ('["Oslo", "  "]', [("Oslo", "MISC")]),
    ('{"identifiers": [{"value": "12/345", "label": "code"}]}', [("12/345", "CODE")]),
    ("[]", []),
])
def test_parse_teacher_answer_accepts_usual_shapes(answer, expected):
    assert parse_teacher_answer(answer) == expected


@pytest.mark.parametrize("answer", [
    "I cannot help with that.", '[{"text": "John Smith", "type": "PER', "[1, 2, 3]", '[{"type": "PERSON"}]',
    '{"a": [1], "b": [2]}', "", None, 42, '{"text": "x"}',
])
def test_parse_teacher_answer_malformed_is_none(answer):
    assert parse_teacher_answer(answer) is None


def test_malformed_answer_gives_no_labels_and_is_left_out_of_the_proxy_set():
    good = Passage("p1", "c1", 0, 10, "Mr John Smith lives in Oslo.")
    bad = Passage("p2", "c2", 0, 10, "The applicant was born in 1970.")
    r_good = result_from_answer("p1", good.text, '[{"text": "John Smith", "type": "PERSON"}]', cached=False)
    r_bad = result_from_answer("p2", bad.text, "Sure! The identifiers are John and 1970.", cached=False)
    assert r_bad.status == "malformed" and r_bad.labels is None and r_bad.spans == []
    proxy = build_proxy_set([good, bad], [r_good, r_bad], SMALL)
    assert len(proxy) == 1  # only the parsed passage
    labelled = [LABELS[int(v)] for v in proxy.y[0] if v > 0]
    assert labelled == ["PERSON", "PERSON"]
    s = teacher_summary([r_good, r_bad])
    assert s["malformed"] == 1 and s["parsed"] == 1 and s["tokens_labelled"] == 2
    with pytest.raises(ValueError, match="does not belong"):
        build_proxy_set([bad, good], [r_good, r_bad], SMALL)


def test_map_items_to_tokens_all_occurrences_case_and_whitespace_and_drops():
    text = "Mr John  Smith met JOHN SMITH in Oslo on 3 May 2001. Smithson was absent."
    items = [("john smith", "PERSON"), ("3 May 2001", "DATETIME"), ("Bergen", "LOC"),
             ("a very long string that is a whole sentence and not an identifier", "MISC"), ("Smith", "PERSON")]
    tl = map_items_to_tokens(text, items, max_item_tokens=8)
    offs = tokenize(text)
    lab = {text[s:e]: LABELS[int(v)] for (s, e), v in zip(offs, tl.labels) if v > 0}
    assert lab == {"John": "PERSON", "Smith": "PERSON", "JOHN": "PERSON", "SMITH": "PERSON", "3": "DATETIME",
                   "May": "DATETIME", "2001": "DATETIME"}
    assert "Smithson" not in lab  # whole words only
    assert tl.n_not_found == 1 and tl.n_too_long == 1 and tl.n_mapped == 3


def test_teacher_messages_hold_the_passage_last():
    msgs = teacher_messages("PASSAGE TEXT")
    assert msgs[-1]["role"] == "user" and msgs[-1]["content"].endswith("PASSAGE TEXT")
    assert json.loads(msgs[2]["content"])  # the worked example is valid JSON


# --- the teacher through the project's HTTP client, and its cache ----------------------------------------

def test_labeller_uses_cloud_endpoint_then_cache(fake_cloud, monkeypatch, tmp_path):
    from cloud_edge_privacy.errors import CloudCallError

    monkeypatch.setenv("CEP_CACHE_DIR", str(tmp_path / "cache"))
    fake_cloud.answer = '[{"text": "Karl Public1", "type": "PERSON"}, {"text": "Nowhere", "type": "LOC"}]'
    passages = [("a", _public_text(1)), ("b", _public_text(2))]
    lab = TeacherLabeller(audit_path=tmp_path / "audit.jsonl")
    res = lab.label(passages, progress=False)
    assert [r.status for r in res] == ["ok", "ok"] and lab.calls == {"cached": 0, "llm": 2}
    assert res[0].mapping == {"items": 2, "mapped": 1, "not_found": 1, "too_long": 0}
    assert res[1].mapping["mapped"] == 0  # "Karl Public1" is not in passage 2
    assert len(fake_cloud.requests) == 2
    audit = [json.loads(x) for x in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert [a["event"] for a in audit] == ["http_attempt", "http_attempt"] and "messages" not in audit[0]
    # a second labeller (no LLM allowed) reads the same answers from the cache
    again = TeacherLabeller(allow_llm=False).label(passages, progress=False)
    assert [r.labels.tolist() for r in again] == [r.labels.tolist() for r in res] and all(r.cached for r in again)
    assert len(fake_cloud.requests) == 2
    with pytest.raises(CloudCallError, match="no cached teacher label"):
        TeacherLabeller(allow_llm=False).label([("c", _public_text(3))], progress=False)


def test_labeller_malformed_answer_is_recorded_not_raised(fake_cloud, monkeypatch, tmp_path):
    monkeypatch.setenv("CEP_CACHE_DIR", str(tmp_path / "cache"))
    fake_cloud.answer = "The passage mentions Karl Public1."
    res = TeacherLabeller(audit_path=tmp_path / "a.jsonl").label([("a", _public_text(1))], progress=False)
    assert res[0].status == "malformed" and res[0].labels is None


# --- the public proxy set -----------------------------------------------------------------------------------

def test_chunk_spans_respect_the_token_limit_and_cover_lines():
    text = "short line\n" + " ".join(f"w{i}" for i in range(250)) + "\nlast line here"
    spans = chunk_spans(text, max_tokens=100)
    assert all(len(tokenize(text[s:e])) <= 100 for s, e in spans)
    assert text[spans[0][0]:spans[0][1]].startswith("short line")
    assert text[spans[-1][0]:spans[-1][1]].endswith("last line here")


def test_proxy_passages_are_disjoint_from_private_documents():
    private = parse_tab_documents([_doc(i, NAMES[i % 6]) for i in range(3)])
    leak = "The applicant, John Smith, was born in 1970 and lives in Oslo. Case number 0 and more words follow here."
    background = {"d0": _bk(_public_text(0)),          # a private case id: excluded
                  "x1": _bk(_public_text(1)),
                  "x2": _bk(leak + " The applicant said so again and again and again."),  # shares 12 tokens
                  "x3": _bk(_public_text(3))}
    ps, info = proxy_passages(background, private, n=10, max_tokens=100, min_tokens=10)
    assert sorted(p.source for p in ps) == ["x1", "x3"]
    assert info["private_doc_ids_excluded"] == 1 and info["skipped_for_12gram_overlap"] == 1
    for p in ps:
        assert background[p.source][p.start:p.end] == p.text and "HEADER" not in p.text and "applicant" in p.text


# --- KD step, methods ---------------------------------------------------------------------------------------

def _proxy(n: int = 4):
    passages = [Passage(f"p{i}", f"x{i}", 0, 0, _public_text(i)) for i in range(n)]
    results = [result_from_answer(p.pid, p.text, json.dumps([{"text": f"Karl Public{i}", "type": "PERSON"},
                                                             {"text": "4 June 2010", "type": "DATETIME"}]), False)
               for i, p in enumerate(passages)]
    return build_proxy_set(passages, results, SMALL)


def test_kd_step_with_an_untrained_model_keeps_nothing_and_after_agreement_trains():
    proxy = _proxy()
    m = new_model(SMALL, 0)
    st = kd_step(m, proxy, KDConfig(), torch.Generator().manual_seed(0))
    assert st["kept"] == 0 and st["trained"] is False and st["teacher_entity"] > 0
    # teach the model the teacher's labels first: then most tokens agree confidently and are kept
    from cloud_edge_privacy.federated.distill import train_teacher_only

    train_teacher_only(m, proxy, epochs=60, lr=1e-2, batch_size=4, generator=torch.Generator().manual_seed(0))
    st = kd_step(m, proxy, KDConfig(), torch.Generator().manual_seed(0))
    assert st["trained"] is True and st["kept"] > 0.5 * st["tokens"] and st["kept_entity"] > 0


def test_privateai_methods_accounting_and_kd_history():
    from cloud_edge_privacy.federated.simulation import FedConfig, run_method

    docs = parse_tab_documents([_doc(i, NAMES[i % 6]) for i in range(6)])
    cfg = FedConfig(n_clients=2, rounds=2, model=SMALL)
    proxy = _proxy()
    with pytest.raises(ValueError, match="proxy"):
        run_method("privateai", docs, cfg, 0, 1.0)
    r = run_method("privateai", docs, cfg, 0, 1.0, proxy=proxy)
    p = r["privacy"]
    assert p["epsilon_total_rdp"] == pytest.approx(1.0, rel=0.02) and "no privacy cost" in p["kd"]
    assert p["epsilon_per_round_paper"] > 1.0  # the same σ stated per round as the paper would
    assert len(r["kd"]) == 1 and set(r["kd"][0]) >= {"kept", "tokens", "trained"}
    r_inf = run_method("privateai", docs, cfg, 0, math.inf, proxy=proxy)
    assert "sigma" not in r_inf["privacy"] and len(r_inf["kd"]) == 1
    r_p = run_method("privateai_paper", docs, cfg, 0, 10.0, proxy=proxy)
    assert r_p["privacy"]["epsilon_per_round_paper"] == 10.0 and r_p["privacy"]["epsilon_total_rdp"] > 10.0
    with pytest.raises(ValueError, match="finite"):
        run_method("privateai_paper", docs, cfg, 0, math.inf, proxy=proxy)
    t = run_method("teacher_only", docs, cfg, 0, math.inf, proxy=proxy)
    assert t["privacy"]["epsilon_total_rdp"] == 0.0 and "model" in t
    with pytest.raises(ValueError, match="no privacy budget"):
        run_method("teacher_only", docs, cfg, 0, 1.0, proxy=proxy)


def test_grid_cells_privateai_has_finite_and_infinite():
    from cloud_edge_privacy.federated.experiment import grid_cells

    cells = grid_cells(["fedavg", "privateai", "privateai_paper", "teacher_only"], [1.0, 10.0])
    assert cells == [("fedavg", math.inf), ("privateai", 1.0), ("privateai", 10.0), ("privateai", math.inf),
                     ("privateai_paper", 1.0), ("privateai_paper", 10.0), ("teacher_only", math.inf)]


# --- LiRA ----------------------------------------------------------------------------------------------------

def test_lira_online_and_offline_scores():
    from cloud_edge_privacy.federated.lira import ShadowRefs, offline_scores, online_scores

    # 4 shadows x 2 windows: window 0 has low loss when IN, high when OUT
    losses = np.array([[0.1, 1.0], [0.2, 1.1], [1.0, 0.9], [1.2, 1.0]])
    inside = np.array([[True, False], [True, False], [False, True], [False, True]])
    refs = ShadowRefs(losses, inside)
    on = online_scores(np.array([0.15, 1.0]), refs)
    off = offline_scores(np.array([0.15, 1.0]), refs)
    assert on[0] > 0 and off[0] > 0          # a target loss like the IN shadows' looks like a member
    lone = online_scores(np.array([0.15]), ShadowRefs(losses[:, :1], np.ones((4, 1), bool)))
    assert math.isnan(lone[0])               # no OUT reference


def test_lira_on_a_model_that_learnt_nothing_is_near_chance():
    """Members and non-members are scored on one scale (σ's from the whole pool): a target whose loss is the same
    on every window, far from all shadows, must not separate them (regression: per-subset σ gave AUC 1.0)."""
    from cloud_edge_privacy.federated.lira import ShadowRefs, offline_scores, online_scores
    from cloud_edge_privacy.federated.mia import roc_auc

    rng = np.random.default_rng(0)
    n_win, n_sh = 400, 16
    inside = rng.random((n_sh, n_win)) < 0.5
    losses = np.where(inside, 0.03, 0.2) + rng.normal(0, 0.02, (n_sh, n_win)) * np.where(inside, 0.3, 1.0)
    refs = ShadowRefs(losses, inside)
    target = np.full(n_win, 2.3) + rng.normal(0, 0.01, n_win)
    mem, non = np.arange(0, 300), np.arange(300, 400)
    for fn in (online_scores, offline_scores):
        sc = fn(target, refs)
        assert 0.35 < roc_auc(sc[mem], sc[non]) < 0.65


# --- the script, smoke, with the new methods (teacher = a fake OpenAI endpoint) -------------------------------

def test_bench_script_smoke_with_distillation_methods(fake_cloud, monkeypatch, tmp_path):
    import importlib.util

    monkeypatch.setenv("CEP_CACHE_DIR", str(tmp_path / "cache"))
    fake_cloud.answer = '[{"text": "Karl Public1", "type": "PERSON"}, {"text": "4 June 2010", "type": "DATETIME"}]'
    spec = importlib.util.spec_from_file_location("run_federated_bench", ROOT / "scripts" / "run_federated_bench.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    data = tmp_path / "tab"
    data.mkdir()
    raw = [_doc(i, n) for i, n in enumerate(NAMES * 2)]
    (data / "train.json").write_text(json.dumps(raw[:9]))
    (data / "dev.json").write_text(json.dumps(raw[9:]))
    (data / "bk.json").write_text(json.dumps({f"x{i}": _bk(_public_text(i)) for i in range(8)}))
    out = tmp_path / "out"
    argv = ["--smoke", "--train", str(data / "train.json"), "--dev", str(data / "dev.json"), "--background",
            str(data / "bk.json"), "--out", str(out), "--methods", "fedavg", "teacher_only", "privateai",
            "privateai_paper", "--epsilons", "10", "--threads", "1"]
    assert mod.main(argv) == 0
    blob = json.loads((out / "grid_rows.json").read_text())
    for kind in ("minilm", "hashed_cnn"):
        cells = sorted((r["method"], r["epsilon"]) for r in blob["rows"] if r["model"] == kind)
        assert cells == [("fedavg", math.inf), ("privateai", 10.0), ("privateai", math.inf), ("privateai_paper", 10.0),
                         ("teacher_only", math.inf)]
    for r in blob["rows"]:
        assert 0 <= r["PSR"] <= 1 and 0 <= r["lira_online_auc"] <= 1 and r["lira_n_shadows"] == 2
        if r["method"].startswith("privateai"):
            assert r["kd"] and "kept" in r["kd"][0]
    md = (out / "grid.md").read_text()
    assert "| hashed_cnn | privateai | 10.0 |" in md and "| minilm | teacher_only | inf |" in md
    assert (out / "lira.md").is_file() and (out / "teacher.md").is_file()
    teacher = json.loads((out / "teacher.json").read_text())
    assert teacher["proxy_summary"]["parsed"] == 4 and teacher["dev_quality"]["scores"]["n_passages"] == 2
    n_req = len(fake_cloud.requests)
    # re-run from the cache alone, then from the saved record: no new request reaches the endpoint
    first = {(r["method"], r["epsilon"]): r["PSR"] for r in blob["rows"]}
    assert mod.main(argv + ["--teacher-cache-only"]) == 0
    # the record inside the output directory (the default experiment's case): the live run's teacher files stay
    assert json.loads((out / "teacher_labels.json").read_text())["teacher"]["model"] == "fake"
    kept = {n: (out / n).read_text() for n in ("teacher_labels.json", "teacher.md", "teacher.json")}
    assert mod.main(argv + ["--teacher-labels", str(out / "teacher_labels.json")]) == 0
    assert {n: (out / n).read_text() for n in kept} == kept and "dev passages" in kept["teacher.md"]
    (tmp_path / "rec.json").write_text((out / "teacher_labels.json").read_text())
    assert mod.main(argv + ["--teacher-labels", str(tmp_path / "rec.json")]) == 0
    assert len(fake_cloud.requests) == n_req
    again = json.loads((out / "grid_rows.json").read_text())["rows"]
    assert {(r["method"], r["epsilon"]): r["PSR"] for r in again} == first  # same labels, same seeds: same numbers
    assert json.loads((out / "teacher.json").read_text())["teacher"]["model"] == "fake"  # a copied record names its teacher


def test_teacher_record_is_reread_against_the_public_text(tmp_path):
    from cloud_edge_privacy.errors import DataValidationError
    from cloud_edge_privacy.federated.distill import load_teacher_record

    background = {"x1": _bk(_public_text(1))}
    start = background["x1"].index("JUDGMENT")
    p = {"pid": "x1:a", "source": "x1", "start": start, "end": len(background["x1"])}
    rec = {"passage_id": "x1:a", "answer": '[{"text": "Karl Public1", "type": "PERSON"}]'}
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"passages": [p], "records": [rec]}))
    passages, results, _ = load_teacher_record(str(path), background)
    assert passages[0].text.startswith("JUDGMENT 1") and results[0].mapping["mapped"] == 1
    path.write_text(json.dumps({"passages": [dict(p, source="secret")], "records": [rec]}))
    with pytest.raises(DataValidationError, match="not in the public background"):
        load_teacher_record(str(path), background)
    path.write_text(json.dumps({"records": []}))
    with pytest.raises(DataValidationError, match="teacher_labels.json"):
        load_teacher_record(str(path), background)


def test_proxy_distiller_for_the_ianvs_aggregator_runs_every_interval(tmp_path):
    from cloud_edge_privacy.federated.distill import ProxyDistiller
    from cloud_edge_privacy.federated.model import get_flat

    text = _bk(_public_text(1))
    start = text.index("JUDGMENT")
    (tmp_path / "bk.json").write_text(json.dumps({"x1": text}))
    (tmp_path / "t.json").write_text(json.dumps({
        "passages": [{"pid": "x1:a", "source": "x1", "start": start, "end": len(text)}],
        "records": [{"passage_id": "x1:a", "answer": '[{"text": "Karl Public1", "type": "PERSON"}]'}]}))
    d = ProxyDistiller(str(tmp_path / "t.json"), str(tmp_path / "bk.json"), SMALL, KDConfig(interval=2, mu=0.0))
    flat = get_flat(new_model(SMALL, 0)).numpy()
    assert d.after_round(1, flat) is flat and not d.history
    new = d.after_round(2, flat)
    assert new.shape == flat.shape and not np.allclose(new, flat)  # μ = 0 keeps every token: it trains
    assert d.history[0]["round"] == 2 and d.history[0]["trained"] is True


@pytest.mark.llm
def test_real_local_teacher_labels_a_passage_then_reads_its_cache(monkeypatch, tmp_path):
    """The offline cloud (local llama.cpp server, the default 0.5B model) answers one prompt; the answer is
    parsed or marked malformed, never raised, and the second call is served from the cache (with the LLM
    forbidden).  No wall-clock bound: the machine is shared; speed lives in benchmarks."""
    import cloud_edge_privacy.federated.teacher as teacher_mod

    for var in ("CEP_CLOUD_BASE_URL", "CEP_CLOUD_MODEL", "CEP_CLOUD_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(teacher_mod, "teacher_cache_dir", lambda: tmp_path / "kd_cache")
    text = "In the case of Hansen v. Norway, the applicant, Mr Ole Hansen, was born in 1961 and lives in Bergen."
    lab = TeacherLabeller(teacher_mod.TeacherConfig(max_tokens=96), audit_path=tmp_path / "audit.jsonl")
    res = lab.label([("p", text)], progress=False)
    assert res[0].status in ("ok", "malformed") and lab.calls["llm"] == 1
    if res[0].status == "ok":
        assert len(res[0].labels) == len(tokenize(text))
    again = TeacherLabeller(teacher_mod.TeacherConfig(max_tokens=96), allow_llm=False).label([("p", text)], progress=False)
    assert again[0].cached and again[0].answer == res[0].answer
