"""PRISM Table 1 pieces: eq. 2-3, the LDP baselines' edge refinement, energy metering, the prompt-major driver
(resume, balance), the summary (intervals, quality (a)/(b), ratios) and the judge's reliability figures."""
import json
import math
from pathlib import Path

import numpy as np
import pytest

from cloud_edge_privacy.core.context import CONTEXTS, sample_key
from cloud_edge_privacy.desensitization import get_operator
from cloud_edge_privacy.randomness import Randomness
from cloud_edge_privacy.sensitivity import personal_context, prism_mask, privacy_profile
from cloud_edge_privacy.spans import Span

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "PRISM" / "cloud_edge_prism_bench"


# -- eq. 2-3 ------------------------------------------------------------------------------------------------

def test_context_flag_counts_first_person_and_person_entities():
    assert personal_context("I plan to travel solo to Tokyo") is True
    assert personal_context("Which country is Tokyo located in?", [Span(17, 22, "LOC")]) is False
    # no first-person word, but a PERSON entity: Δ = 1 (the paper's F holds detected PERSON entities too)
    text = "A 42-year-old patient named John reports pain."
    assert personal_context(text) is False and personal_context(text, [Span(28, 32, "PERSON")]) is True
    assert prism_mask(text, [Span(28, 32, "PERSON"), Span(2, 13, "DATETIME")]) == [True, True]
    assert prism_mask("Which country is Tokyo in?", [Span(17, 22, "LOC")]) == [False]
    prof = privacy_profile(text, [Span(28, 32, "PERSON")])
    assert prof["personal_context"] is True and prof["entities"][0]["sensitive"] is True


def test_prism_ldp_perturbs_only_what_eq3_flags_and_codes_always():
    rand = Randomness.benchmark(3)
    op = get_operator("prism_ldp", epsilon=1.0, entity_mask="context")
    factual = "Which country is Tokyo located in?"
    r = op(factual, [Span(17, 22, "LOC")], rand)
    assert r.text == factual and r.charges == []                  # Δ = 0: released as is, no ε claimed
    # Δ = 0 yet a code: still perturbed (the project's floor)
    code = "Is account 12345678 valid?"
    r = op(code, [Span(11, 19, "CODE")], rand)
    assert "12345678" not in r.text or len(r.charges) == 2
    assert len(r.charges) == 2
    personal = "I plan to travel solo to Tokyo for three days"
    texts = {op(personal, [Span(25, 30, "LOC")], Randomness.benchmark(s)).text for s in range(30)}
    assert len(texts) > 1                                         # Δ = 1: randomized
    every = get_operator("prism_ldp", epsilon=1.0)                # default "all": every entity
    assert len(every(factual, [Span(17, 22, "LOC")], rand).charges) == 2


def test_prism_ldp_budget_split_is_eq6():
    from cloud_edge_privacy.desensitization.dp_mechanisms import split_budget

    e1, e2 = split_budget(2.0, 0.9, 0.5)
    assert e1 == pytest.approx(2.0 * 0.9 / (0.9 + 0.5 * 0.1)) and e1 + e2 == pytest.approx(2.0)
    assert split_budget(2.0, 0.4, 0.5)[0] < split_budget(2.0, 0.9, 0.5)[0]


# -- edge refinement of the LDP baselines -----------------------------------------------------------------

X = {"doc_id": "p1", "text": "I am Anna Berg and I have a fever. What should I do?",
     "instruction": "Answer the user's request helpfully and concisely."}


class _Refiner:
    def __init__(self):
        self.calls = []

    def refine(self, instruction, text, sketch, kind="sketch"):
        self.calls.append((text, sketch, kind))
        return {"answer": f"refined:{kind}", "generation_ms": 2.0, "prompt_tokens": 3, "completion_tokens": 4}


def _pipeline(**cfg):
    from cloud_edge_privacy.core.module_configs import CloudModelConfig
    from cloud_edge_privacy.core.pipeline import EdgePipeline

    return EdgePipeline(CONTEXTS.get(), CloudModelConfig(**cfg))


@pytest.mark.parametrize("refine", [True, False])
def test_ldp_baseline_refines_the_cloud_draft_on_the_edge(fake_cloud, refine):
    fake_cloud.mode = "echo"
    CONTEXTS.get().record_decision(sample_key(X), {"route": "cloud"})
    p = _pipeline(privacy_method="metric_dp_words", epsilon=8.0, cache=False, edge_refinement=refine,
                  detector="regex+spacy")
    p._refiner = _Refiner()
    res = p.cloud(X)
    assert res.status == "ok", res.reason
    body = fake_cloud.requests[0]["body"]["messages"]
    assert len(body) == 2 and "sketch" not in body[0]["content"].lower()   # a plain request, no sketch demos
    assert "Anna Berg" not in json.dumps(body)
    if refine:
        assert p._refiner.calls and p._refiner.calls[0][0] == X["text"] and p._refiner.calls[0][2] == "draft"
        assert res.answer == "refined:draft" and res.cloud_draft and res.timings_ms["refinement"] == 2.0
    else:
        assert not p._refiner.calls and "refinement" not in res.timings_ms


def test_refinement_prompts_differ_by_kind():
    from cloud_edge_privacy.models.collaboration import refine_messages

    s, d = refine_messages("T", "orig", "S"), refine_messages("T", "orig", "S", "draft")
    assert "sketch" in s[0]["content"] and "noisy" in d[0]["content"] and "orig" in d[1]["content"]
    with pytest.raises(ValueError, match="kind"):
        refine_messages("T", "o", "S", "other")


# -- energy -----------------------------------------------------------------------------------------------

def test_energy_estimate_from_cpu_time_is_labelled(monkeypatch):
    from cloud_edge_privacy.bench.energy import EnergyMeter, EnergyModel

    m = EnergyModel(idle_w=2.0, core_w=10.0)
    assert m.joules(3.0, 0.5) == pytest.approx(11.0)
    with EnergyMeter(m, use_rapl=False) as meter:
        sum(i * i for i in range(300000))                       # burns CPU time in this process
    r = meter.reading
    assert r.method == "estimate" and "W" in r.detail and r.cpu_s > 0
    assert r.joules == pytest.approx(2.0 * r.wall_s + 10.0 * r.cpu_s)
    monkeypatch.setenv("CEP_ENERGY_CORE_W", "abc")
    with pytest.raises(ValueError, match="CEP_ENERGY_CORE_W"):
        EnergyModel.from_env()
    with pytest.raises(ValueError, match="idle_w"):
        EnergyModel(idle_w=-1)


def test_rapl_counters_are_read_per_package_with_wraparound(tmp_path):
    from cloud_edge_privacy.bench.energy import EnergyMeter, rapl_packages

    pkg, sub = tmp_path / "intel-rapl:0", tmp_path / "intel-rapl:0:0"
    for d in (pkg, sub):
        d.mkdir()
        (d / "max_energy_range_uj").write_text("1000000\n")
    (pkg / "energy_uj").write_text("999000\n")
    (sub / "energy_uj").write_text("5\n")
    assert [p.parent.name for p, _ in rapl_packages(tmp_path)] == ["intel-rapl:0"]   # sub-domains not added
    with EnergyMeter(root=tmp_path) as meter:
        (pkg / "energy_uj").write_text("1000\n")                 # wrapped: 999000 -> 1000000 -> 1000
    assert meter.reading.method == "rapl" and meter.reading.joules == pytest.approx(0.002)
    assert rapl_packages(tmp_path / "missing") == []


def test_metered_modules_and_metrics():
    from cloud_edge_privacy.bench.energy import EnergyMeter
    from cloud_edge_privacy.metrics import edge_energy
    from cloud_edge_privacy.bench.prism_modules import metered

    with EnergyMeter(use_rapl=False) as m:
        pass
    res = metered({"status": "ok", "answer": "a"}, m)
    assert res["wall_ms"] >= 0 and res["energy"]["method"] == "estimate"
    ok = {"status": "ok", "answer": "a", "wall_ms": 2000.0, "energy": {"joules": 10.0}}
    bad = {"status": "privacy_failure", "answer": "", "wall_ms": 1.0, "energy": {"joules": 1.0}}
    y_pred = [[True, ok, None, ok], [True, bad, None, bad]]
    assert edge_energy.completion_time_s([{}, {}], y_pred) == 2.0     # failed samples are not averaged
    assert edge_energy.edge_energy_j([{}, {}], y_pred) == 10.0


# -- the driver and the summary ----------------------------------------------------------------------------

def test_round_robin_balances_domains_and_resume_keys(tmp_path):
    from cloud_edge_privacy.bench.prism_bench import done_keys, round_robin

    recs = [{"question": {"doc_id": f"{d}{i}"}, "answer": {"domain": d}} for d in ("b", "a") for i in range(3)]
    order = [r["question"]["doc_id"] for r in round_robin(recs)]
    assert order == ["a0", "b0", "a1", "b1", "a2", "b2"]
    assert [r["question"]["doc_id"] for r in round_robin(recs, per_domain=1)] == ["a0", "b0"]
    ck = tmp_path / "ck.jsonl"
    ck.write_text(json.dumps({"doc_id": "a0", "case": "x"}) + "\n" + '{"doc_id": "a1", "ca')  # cut last line
    assert done_keys(ck) == {("a0", "x")}


def test_example_job_has_five_methods_with_own_modules():
    from cloud_edge_privacy.bench.ianvs_config import load_benchmarking_job
    from cloud_edge_privacy.bench.prism_bench import case_label

    job = load_benchmarking_job(str(EXAMPLE / "benchmarkingjob.yaml"))
    labels = [case_label(a, job.algorithms) for a in job.algorithms]
    assert labels == ["cloud-only", "edge-only", "uniform-ldp", "selective-ldp", "prism"]
    for a in job.algorithms:
        for spec in a.modules.values():
            assert "examples/PRISM/" in spec.url                 # the example's own module files
        cloud = a.modules["cloudmodel"].hyperparameters
        assert cloud.get("edge_refinement", False) == (a.name in ("uniform-ldp", "selective-ldp"))
    prism = job.algorithms[-1].modules["cloudmodel"].hyperparameters
    assert prism["method_params"]["entity_mask"] == "context"
    sweep = load_benchmarking_job(str(EXAMPLE / "benchmarkingjob_epsilon.yaml"))
    assert len(sweep.algorithms) == 15


def _row(doc, case, domain, route, answer, wall, joules, status="ok", sent=True):
    res = {"route": route, "answer": answer, "status": status, "wall_ms": wall * 1e3,
           "energy": {"joules": joules, "method": "estimate", "cpu_s": 0.1},
           "sent_messages": [{"role": "user", "content": "hello"}] if sent else None}
    return {"doc_id": doc, "case": case, "domain": domain, "pred": [route != "edge", res, None, res]}


def test_summary_table_intervals_similarity_judge_and_ratios(tmp_path):
    from cloud_edge_privacy.bench.prism_bench import ratio_ci, render_markdown, summarize

    data = tmp_path / "d.jsonl"
    docs = [("m1", "medical"), ("m2", "medical"), ("b1", "bank"), ("b2", "bank")]
    data.write_text("".join(json.dumps({"question": {"doc_id": d, "text": f"I am Anna, {d}", "instruction": "A."},
                                        "answer": {"doc_id": d, "text": f"I am Anna, {d}", "domain": dom,
                                                   "annotations": {"rules": [{"start_offset": 5, "end_offset": 9,
                                                                              "span_text": "Anna",
                                                                              "identifier_type": "DIRECT"}]}}})
                            + "\n" for d, dom in docs))
    ck = tmp_path / "ck.jsonl"
    rows = []
    for i, (d, dom) in enumerate(docs):
        rows.append(_row(d, "cloud-only", dom, "cloud", "ref answer", 1.0 + i, 5.0))
        rows.append(_row(d, "prism", dom, "collaborative", "ref answer" if i % 2 else "other", 2.0 + i, 9.0))
    rows.append(_row("m1", "edge-only", "medical", "edge", "x", 3.0, 20.0, sent=False))  # m1 only: not common
    rows[0]["pred"][1]["sent_messages"] = [{"role": "user", "content": "I am Anna, m1"}]  # a leak
    ck.write_text("".join(json.dumps(r) + "\n" for r in rows))

    class Judge:
        name = "fake"

        def reply(self, prompt):
            return "8" if "ref answer" in prompt else "3"

    vecs = {"ref answer": np.array([1.0, 0.0]), "other": np.array([0.0, 1.0]), "x": np.array([0.6, 0.8])}
    import cloud_edge_privacy.bench.prism_bench as pb

    orig = pb.add_similarity
    pb.add_similarity = lambda samples, ref: orig(samples, ref, embed=lambda ts: [vecs[t] for t in ts])
    try:
        s = summarize(ck, tmp_path / "res", str(data), Judge(), progress=False)
    finally:
        pb.add_similarity = orig
    # edge-only has answered m1 only, so every case is compared on m1 alone
    assert s["prompts"] == 1
    ck.write_text("".join(json.dumps(r) + "\n" for r in rows[:-1]))
    pb.add_similarity = lambda samples, ref: orig(samples, ref, embed=lambda ts: [vecs[t] for t in ts])
    try:
        s = summarize(ck, tmp_path / "res", str(data), Judge(), progress=False)
    finally:
        pb.add_similarity = orig
    st = s["stats"]
    assert s["prompts"] == 4 and st["cloud-only"]["completion_time_s"].value == pytest.approx(2.5)
    assert st["prism"]["similarity_to_cloud_only"].value == pytest.approx(0.5)
    assert st["cloud-only"]["leak_direct"] == 1 and st["prism"]["leak_direct"] == 0
    assert st["prism"]["judge_a"].value == pytest.approx(5.5) and st["prism"]["routes"]["collaborative"] == 1.0
    ratio = s["latency_ratios"]["prism / cloud-only"]
    assert ratio.value == pytest.approx(3.5 / 2.5) and ratio.low <= ratio.value <= ratio.high
    assert s["judge_reliability"]["exact"] == 1.0                 # the fake judge is deterministic
    md = (tmp_path / "res" / "table.md").read_text()
    assert "| prism |" in md and "## Per domain" in md and "prism / cloud-only" in md
    assert (tmp_path / "res" / "per_sample.csv").read_text().count("\n") == 9
    assert json.loads((tmp_path / "res" / "summary.json").read_text())["prompts"] == 4
    assert math.isnan(ratio_ci([], []).value)
    assert render_markdown(s) == md


def test_judge_reliability_figures():
    from cloud_edge_privacy.metrics.judge import judge_reliability, parse_score, spearman

    a = [8, 7, 3, 5, float("nan")]
    b = [9, 7, 2, 5, 4]
    r = judge_reliability(a, b, ["x", "x", "y", "y", "y"])
    assert r.n == 4 and r.exact == 0.5 and r.within_one == 1.0 and r.mean_abs_diff == 0.5
    assert r.spearman == pytest.approx(1.0) and r.method_range_a == pytest.approx(3.5)
    assert math.isnan(spearman([1, 1, 1], [1, 2, 3]))
    assert parse_score("Rating: 10") == 10.0 and math.isnan(parse_score("none"))


def test_remote_judge_through_an_openai_compatible_endpoint(fake_cloud):
    from cloud_edge_privacy.metrics.judge import make_judge, judge_score

    fake_cloud.mode = "echo"
    j = make_judge(fake_cloud.base_url, "fake")
    assert j.name == "remote:fake"
    judge_score("What is 2+2?", "4", j, prompt="b")
    sent = fake_cloud.requests[-1]["body"]
    assert sent["model"] == "fake" and sent["temperature"] == 0.0 and "[Question]" in json.dumps(sent)
    from cloud_edge_privacy.errors import ConfigError

    with pytest.raises(ConfigError, match="judge model"):
        make_judge("http://127.0.0.1:9/v1", None)


def test_leak_audit_without_llm_calls(tmp_path, in_repo):
    """Cloud-only sends every gold identifier, Edge-only nothing; no model is loaded and nothing is sent."""
    from cloud_edge_privacy.bench.prism_bench import leak_audit

    job = tmp_path / "job.yaml"
    job.write_text(f"""benchmarkingjob:
  name: "leaks"
  workspace: "{tmp_path / 'ws'}"
  testenv: "./examples/PRISM/cloud_edge_prism_bench/testenv/testenv.yaml"
  test_object:
    type: "algorithms"
    algorithms:
      - {{name: "cloud-only", url: "./examples/PRISM/cloud_edge_prism_bench/testalgorithms/cloud_only.yaml"}}
      - {{name: "edge-only", url: "./examples/PRISM/cloud_edge_prism_bench/testalgorithms/edge_only.yaml"}}
  rank:
    selected_dataitem: {{paradigms: ["all"], modules: ["all"], hyperparameters: ["all"], metrics: ["all"]}}
""")
    data = tmp_path / "d.jsonl"
    src = (EXAMPLE / "data" / "prism_prompts.jsonl").read_text().splitlines()
    picked = [l for l in src if json.loads(l)["answer"]["domain"] in ("bank", "common")][:3] + src[-1:]
    data.write_text("\n".join(picked) + "\n")
    gold = sum(len(json.loads(l)["answer"]["annotations"]["rules"]) for l in picked)
    assert gold > 0
    res = leak_audit(str(job), str(data), tmp_path / "out", progress=False)
    assert res["stats"]["cloud-only"]["leaks"] == gold and res["stats"]["cloud-only"]["sent"] == len(picked)
    assert res["stats"]["edge-only"]["sent"] == 0 and res["stats"]["edge-only"]["leaks"] == 0
    assert "| cloud-only | 4 | 0 |" in (tmp_path / "out" / "leak_audit.md").read_text()
