import json
import math

import pytest

from cloud_edge_privacy.core.context import CONTEXTS, sample_key
from cloud_edge_privacy.desensitization import get_operator
from cloud_edge_privacy.metrics import judge
from cloud_edge_privacy.datasets.prism import gold_direct, load_prism_prompts, write_prism_jsonl
from cloud_edge_privacy.routing.routers import FixedRouter
from cloud_edge_privacy.spans import Span


@pytest.mark.parametrize("prompt, expected", [
    ("A 42-year-old female patient named John reports pain.", ["John"]),
    ("My name is Robert Lee and my credit card number is 4326773602606478.", ["Robert Lee", "4326773602606478"]),
    ("Mia here; I want to dispute a charge on my Chase card ending with 8770.", ["Mia"]),
    ("Dear PNC Bank, please help.", []),
    ("Compose a travel blog post about Hawaii.", []),
])
def test_rule_based_gold_identifiers(prompt, expected):
    assert [m["span_text"] for m in gold_direct(prompt)] == expected
    for m in gold_direct(prompt):
        assert prompt[m["start_offset"]:m["end_offset"]] == m["span_text"] and m["identifier_type"] == "DIRECT"


def test_prepare_prism_keeps_gold_out_of_x_and_stratifies(tmp_path):
    src = tmp_path / "p.jsonl"
    src.write_text("\n".join(json.dumps({"id": f"{d[0]}{i}", "domain": d, "prompt": f"I am Anna Berg, case {i}."})
                             for d in ("medical", "bank") for i in range(3)) + "\n")
    out = tmp_path / "o.jsonl"
    assert write_prism_jsonl(load_prism_prompts(str(src)), str(out), per_domain=2) == 4
    recs = [json.loads(l) for l in out.read_text().splitlines()]
    assert set(recs[0]["question"]) == {"doc_id", "text", "instruction"}
    assert recs[0]["answer"]["annotations"]["rules"][0]["span_text"] == "Anna Berg"
    (tmp_path / "bad.jsonl").write_text('{"id": "x"}\n')
    from cloud_edge_privacy.errors import DataValidationError
    with pytest.raises(DataValidationError, match="line 1: missing or empty field 'prompt'"):
        load_prism_prompts(str(tmp_path / "bad.jsonl"))


def test_fixed_router_records_its_route():
    x = {"doc_id": "a", "text": "hello", "instruction": "Answer."}
    assert FixedRouter(route="cloud")(x) is True and FixedRouter(route="edge")(x) is False
    assert CONTEXTS.get().decision(sample_key(x)).route == "edge"
    from cloud_edge_privacy.errors import ConfigError

    with pytest.raises(ConfigError, match="route"):
        FixedRouter(route="moon")


def test_uniform_ldp_touches_every_word_selective_only_entities():
    text = "Anna Berg has a fever and a cough."
    from cloud_edge_privacy.randomness import Randomness

    rand = Randomness.benchmark(0)
    uni = get_operator("uniform_ldp", epsilon=1.0)(text, [Span(0, 9, "PERSON")], rand)
    sel = get_operator("selective_ldp", epsilon=1.0)(text, [Span(0, 9, "PERSON")], rand)
    assert sel.text.endswith("has a fever and a cough.")
    assert len(uni.replacements) == 8 and uni.text != text and uni.epsilon_by_kind()['metric'] > sel.epsilon_by_kind()['metric']


def test_route_shares_and_judge_parsing(monkeypatch):
    res = lambda route: {"route": route, "answer": "x"}  # noqa: E731
    y_pred = [[False, res("edge"), res("edge"), None], [True, res("cloud"), None, res("cloud")],
              [True, res("collaborative"), None, res("collaborative")], [True, res("cloud"), None, res("cloud")]]
    y_true = [{"text": "q"}] * 4
    assert (judge.edge_share(y_true, y_pred), judge.collaborative_share(y_true, y_pred),
            judge.cloud_share(y_true, y_pred)) == (0.25, 0.25, 0.5)

    class FakeJudge:
        def __init__(self, replies):
            self.replies = list(replies)

        def chat(self, messages):
            return {"answer": self.replies.pop(0)}

    fake = FakeJudge(["Score: 7", "I'd say 10/10", "no idea", "3"])
    monkeypatch.setattr(judge, "default_judge", lambda: fake)
    assert judge.llm_judge(y_true, y_pred) == round((7 + 10 + 3) / 3, 3)   # "no idea" is skipped
    assert math.isnan(judge.judge_score("q", "   "))
