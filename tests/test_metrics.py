"""Metrics on hand-built documents whose scores are worked out by hand in the comments."""
import math

import pytest

from cloud_edge_privacy.metrics import performance, privacy, tab_official

TEXT = "Mr John Smith lives in Oslo. Smith was born in 1961."
#        0123456789012345678901234567890123456789012345678901
# John Smith [3,13) DIRECT e1; Oslo [23,27) QUASI e2; Smith [29,34) DIRECT e1; 1961 [47,51) QUASI e3


def _m(start, end, ident, eid, etype="PERSON", conf="NOT_CONFIDENTIAL"):
    return {"entity_type": etype, "entity_mention_id": f"m{start}", "start_offset": start, "end_offset": end,
            "span_text": TEXT[start:end], "identifier_type": ident, "entity_id": eid, "confidential_status": conf}


GOLD = {"doc_id": "d1", "text": TEXT, "annotations": {"a1": [
    _m(3, 13, "DIRECT", "e1"), _m(23, 27, "QUASI", "e2", "LOC"), _m(29, 34, "DIRECT", "e1"),
    _m(47, 51, "QUASI", "e3", "DATETIME")]}}


def test_hand_worked_tab_scores():
    # masks: "John Smith" and "Oslo" and "1961", but the second "Smith" is left in clear.
    c = tab_official.score_masks({"d1": GOLD}, {"d1": [[3, 13, "X"], [23, 27, "X"], [47, 51, "X"]]})
    # ER_di: entity e1 has an unmasked DIRECT mention -> 0/1.  ER_qi: e2, e3 both masked -> 2/2.
    assert c["ER_di"] == 0.0 and c["ER_qi"] == 1.0
    # gold tokens: John, Smith, Oslo, Smith, 1961 = 5; masked 4 -> 0.8.  masked tokens 4, all gold -> 1.0
    assert c["token_recall"] == 0.8 and c["token_precision"] == 1.0
    # masking the second "Smith" too and over-masking "lives": 6 masked tokens, 5 of them gold -> 5/6
    c2 = tab_official.score_masks({"d1": GOLD}, {"d1": [[3, 13, "X"], [14, 19, "X"], [23, 27, "X"], [29, 34, "X"], [47, 51, "X"]]})
    assert c2["ER_di"] == 1.0 and c2["token_recall"] == 1.0 and c2["token_precision"] == round(5 / 6, 6)


def test_micro_average_over_annotators():
    gold = dict(GOLD, annotations={"a1": GOLD["annotations"]["a1"], "a2": [_m(23, 27, "DIRECT", "x1", "LOC")]})
    c = tab_official.score_masks({"d1": gold}, {"d1": [[23, 27, "X"]]})
    # ER_di pools a1's e1 (not masked) and a2's x1 (masked) -> 1/2
    assert c["ER_di"] == 0.5


def _pred(sent, masks=(), hard=True):
    cloud = {"status": "ok", "sent_messages": [{"role": "user", "content": sent}], "masks": list(masks),
             "tokens": {"cloud_prompt": 10, "cloud_completion": 5}, "timings_ms": {"cloud_call": 100.0}}
    return [hard, cloud, None, cloud]


def test_pdr_sels_and_leak_audit_catch_a_planted_leak():
    # sent text keeps "Smith" (DIRECT, s=5) and "1961" (QUASI, s=3); 4 gold mentions; "Smith" occurs twice
    # in gold, and both mentions' surface "Smith"/"John Smith": "John Smith" is absent, "Smith" present.
    sent = "Mr [PERSON] lives in [LOC]. Smith was born in 1961."
    y_true, y_pred = [GOLD], [_pred(sent)]
    assert privacy.leak_direct(y_true, y_pred) == 1
    assert privacy.pdr(y_true, y_pred) == 0.5                 # 2 of 4 leaked
    assert privacy.sels(y_true, y_pred) == round(8 / 16, 6)   # (5+3) / (5+3+5+3)


def test_confidential_mention_weighs_more():
    assert privacy.mention_sensitivity({"identifier_type": "QUASI", "confidential_status": "HEALTH"}) == 4
    assert privacy.mention_sensitivity({"identifier_type": "DIRECT", "confidential_status": "HEALTH"}) == 5


def test_word_boundaries_avoid_false_leaks():
    assert not privacy.appears_in("Smith", "Smithson visited")
    assert privacy.appears_in("John  Smith", "John Smith")


def test_edge_only_and_empty_runs_do_not_crash():
    edge = {"answer": "a", "timings_ms": {"edge_generation": 50.0}}
    y_pred = [[False, edge, edge, None]]
    assert privacy.pdr([GOLD], y_pred) == 1.0 and privacy.leak_direct([GOLD], y_pred) == 0
    assert math.isnan(tab_official.er_di([GOLD], y_pred))
    assert performance.edge_ratio([GOLD], y_pred) == 1.0
    assert performance.latency_mean_ms([GOLD], y_pred) == 50.0
    assert math.isnan(performance.edge_ratio([], []))
    assert privacy.pdr([], []) == 1.0 and performance.cloud_tokens([], []) == 0


def test_gold_as_json_string_and_misaligned_lengths():
    import json
    # "John Smith" sent in clear leaks both DIRECT mentions ("John Smith" and the later "Smith")
    assert privacy.leak_direct([json.dumps(GOLD)], [_pred("John Smith")]) == 2
    with pytest.raises(ValueError, match="y_true has 1 samples but y_pred has 2"):
        privacy.pdr([GOLD], [_pred("a"), _pred("b")])


def test_failed_closed_sample_counts_as_nothing_sent():
    failed = {"status": "privacy_failure", "sent_messages": None}
    y_pred = [[True, failed, None, failed]]
    assert privacy.leak_direct([GOLD], y_pred) == 0
    assert performance.privacy_failures([GOLD], y_pred) == 1


def test_hand_worked_two_annotators_titles_and_per_annotator_precision():
    text = "Mr Ole Hansen met Kari Berg in Oslo."
    def m(s, e, ident, eid):
        return {"entity_type": "X", "entity_mention_id": f"{eid}{s}", "start_offset": s, "end_offset": e,
                "span_text": text[s:e], "identifier_type": ident, "entity_id": eid}
    gold = {"text": text, "annotations": {
        "a1": [m(0, 13, "DIRECT", "a1e1"), m(31, 35, "QUASI", "a1e2")],
        "a2": [m(3, 13, "DIRECT", "a2e1"), m(18, 27, "QUASI", "a2e3")]}}
    c = tab_official.score_masks({"d": gold}, {"d": [[3, 13, "X"], [31, 35, "X"]]})
    # "Mr" left uncovered is ignorable, so both annotators' person entity is masked: ER_di 2/2.
    # Quasi: a1's Oslo masked, a2's Kari Berg not: ER_qi 1/2.
    assert c["ER_di"] == 1.0 and c["ER_qi"] == 0.5
    # tokens: a1 Mr Ole Hansen Oslo (4, all masked; "Mr" is ignorable), a2 Ole Hansen Kari Berg (2 of 4): 6/8
    assert c["token_recall"] == 0.75
    # masked tokens Ole, Hansen, Oslo x 2 annotators = 6; credit Ole 2, Hansen 2, Oslo 1 -> 5/6
    assert c["token_precision"] == round(5 / 6, 6)


DATA = __import__("pathlib").Path(__file__).parent / "data"


@pytest.mark.parametrize("case, expected", [
    # the documents of test_hand_worked_tab_scores and test_hand_worked_two_annotators_..., as TAB JSON files
    ("one", (0.0, 1.0, 0.8, 1.0)),
    ("two", (1.0, 0.5, 0.75, round(5 / 6, 6))),
])
def test_score_tab_cli_on_the_hand_worked_files(case, expected, capsys):
    import json
    from cloud_edge_privacy.cli import main

    gold, masks = DATA / f"hand_worked_gold_{case}.json", DATA / f"hand_worked_masks_{case}.json"
    assert main(["score-tab", "--gold", str(gold), "--masks", str(masks)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["ER_di"], out["ER_qi"], out["token_recall"], out["token_precision"]) == expected


def test_score_tab_cli_rejects_bad_masks(tmp_path, capsys):
    import json
    from cloud_edge_privacy.cli import main

    (tmp_path / "bad.json").write_text(json.dumps({"one_annotator": [[5, 2, "X"]]}))
    assert main(["score-tab", "--gold", str(DATA / "hand_worked_gold_one.json"), "--masks", str(tmp_path / "bad.json")]) == 2
    assert "bad.json" in capsys.readouterr().err


def test_attacks_on_hand_built_traffic():
    from cloud_edge_privacy.metrics import attacks

    # doc 1: "John Smith" hidden but "Smith" left in clear -> co-reference leak; its QI "1961" and "Oslo"
    # known to the attacker: both appear, so the sent text links back to doc 1 uniquely.
    sent1 = "Mr [PERSON] lives in Oslo. Smith was born in 1961."
    other = dict(GOLD, doc_id="d2", text="Ms Ada Lund lives in Bergen.", annotations={"a1": [
        {"entity_type": "PERSON", "entity_mention_id": "x", "start_offset": 3, "end_offset": 11,
         "span_text": "Ada Lund", "identifier_type": "DIRECT", "entity_id": "x1"}]})
    y_true, y_pred = [GOLD, other], [_pred(sent1), _pred("Ms [PERSON] lives in [LOC].")]
    # entities with a hidden mention: e1 (John Smith hidden, Smith clear -> leak), x1 (hidden, no leak) -> 1/2
    assert attacks.coref_leak_rate(y_true, y_pred) == 0.5
    # doc 1 re-identified (3 known values match), doc 2 not (0 matches) -> 1/2
    assert attacks.reidentification_rate(y_true, y_pred) == 0.5
    assert attacks.iar(y_true, y_pred) == 0.5
    edge_only = [[False, {"answer": "a"}, {"answer": "a"}, None]] * 2
    assert math.isnan(attacks.iar(y_true, edge_only))


def test_cpp_with_the_real_minilm_model():
    from cloud_edge_privacy.metrics import semantic

    same = [_pred(TEXT)]
    far = [_pred("Completely unrelated words about cooking pasta.")]
    assert semantic.cpp_similarity([GOLD], same) == pytest.approx(1.0, abs=1e-4)
    assert semantic.cpp([GOLD], far) > 0.5
    assert math.isnan(semantic.cpp([GOLD], [[False, {}, {}, None]]))


def test_lo_and_ti_from_one_run_hand_worked():
    # one sample: detection 10 ms + desensitization 5 ms + restoration 5 ms around a 180 ms cloud call
    cloud = {"status": "ok", "sent_messages": [{"content": "x"}], "masks": [],
             "timings_ms": {"detection": 10.0, "desensitization": 5.0, "restoration": 5.0, "cloud_call": 180.0}}
    y_pred = [[True, cloud, None, cloud]]
    assert performance.lo_pct([GOLD], y_pred) == round(100 * 20 / 180, 4)     # 11.1111 %
    assert performance.ti_pct([GOLD], y_pred) == round(100 * 20 / 200, 4)     # 10 %: 5.0/s -> 5.56/s without
    assert math.isnan(performance.lo_pct([], []))
    # the egress guard is privacy processing too (the baseline does not run it)
    guarded = dict(cloud, timings_ms=dict(cloud["timings_ms"], egress_guard=20.0))
    assert performance.ti_pct([GOLD], [[True, guarded, None, guarded]]) == round(100 * 40 / 220, 4)


def test_inference_attack_counts_recovered_values(monkeypatch):
    from cloud_edge_privacy.metrics import attacks

    class FakeLM:
        def __init__(self, guesses):
            self.guesses = list(guesses)

        def chat(self, messages):
            assert "<<TARGET>>" in messages[0]["content"]
            return {"answer": self.guesses.pop(0)}

    sent = "Mr [PERSON_1] lives in [LOC_1]. [PERSON_2] was born in 1961."
    masks = [[3, 13, "[PERSON_1]"], [23, 27, "[LOC_1]"], [29, 34, "[PERSON_2]"]]
    pred = _pred(sent, masks)
    # two masked DIRECT mentions attacked (LOC is QUASI): the first guess recovers "John Smith" -> 1/2
    assert attacks.inference_attack_rate([GOLD], [pred], attacker=FakeLM(["john smith", "Peter"])) == 0.5


def _res(status, sent=None, answer="", route="cloud"):
    return {"status": status, "route": route, "answer": answer,
            "sent_messages": None if sent is None else [{"role": "user", "content": sent}], "masks": [],
            "timings_ms": {"cloud_call": 100.0}}


def test_completion_counts_and_leakage_over_completed_or_sent_samples():
    ok = _res("ok", "Mr [PERSON] lives in Oslo. [PERSON] was born in [DATE].", "answer")  # leaks Oslo (QUASI, 3)
    failed_closed = _res("privacy_failure")                                             # nothing sent
    failed_after_send = _res("cloud_failure", TEXT)                                     # everything sent, no answer
    y_true = [GOLD, GOLD, GOLD]
    y_pred = [[True, ok, None, ok], [True, failed_closed, None, failed_closed],
              [True, failed_after_send, None, failed_after_send]]
    assert performance.n_completed(y_true, y_pred) == 1 and performance.n_failed(y_true, y_pred) == 2
    assert performance.privacy_failures(y_true, y_pred) == 1
    # counted: the completed sample (1 of 4 mentions leaked, weight 3 of 16) and the cloud failure whose
    # traffic left (4 of 4 leaked, 16 of 16); the failed-closed sample is not counted
    assert privacy.pdr(y_true, y_pred) == round(1 - 5 / 8, 6)
    assert privacy.sels(y_true, y_pred) == round(19 / 32, 6)
    assert privacy.leak_direct(y_true, y_pred) == 2       # John Smith and Smith, from the failed request
    # latency over completed samples only
    assert performance.latency_mean_ms(y_true, y_pred) == 100.0
    # a configuration that fails closed on everything leaks nothing but also counts nothing
    only_failed = [[True, failed_closed, None, failed_closed]]
    assert performance.n_completed([GOLD], only_failed) == 0 and privacy.leak_direct([GOLD], only_failed) == 0


def test_llm_judge_counts_failed_samples_as_zero(monkeypatch):
    from cloud_edge_privacy.metrics import judge

    class Fixed:
        def chat(self, messages):
            return {"answer": "8"}

    ok, failed = _res("ok", "x", "an answer"), _res("privacy_failure")
    y_pred = [[True, ok, None, ok], [True, failed, None, failed]]
    assert judge.judge_score("q", "an answer", Fixed()) == 8.0
    assert math.isnan(judge.judge_score("q", "", Fixed()))
    # with the default judge replaced: (8 + 0) / 2
    monkeypatch.setattr(judge, "default_judge", lambda: Fixed())
    assert judge.llm_judge([GOLD, GOLD], y_pred) == 4.0


def test_iar_is_the_worst_cheap_attack_not_a_blend():
    from cloud_edge_privacy.metrics import attacks

    # co-reference leak 1/1 (John Smith hidden, Smith in clear), oracle linking 1/1 (unique match)
    sent = "Mr [PERSON] lives in Oslo. Smith was born in 1961."
    assert attacks.coref_leak_rate([GOLD], [_pred(sent)]) == 1.0
    assert attacks.iar([GOLD], [_pred(sent)]) == 0.0
    # everything hidden: coref leak 0/3 entities, oracle linking 0 (no known value matches): iar = 1
    hidden = "Mr [PERSON] lives in [LOC]. [PERSON] was born in [DATE]."
    assert attacks.coref_leak_rate([GOLD], [_pred(hidden)]) == 0.0 and attacks.iar([GOLD], [_pred(hidden)]) == 1.0
