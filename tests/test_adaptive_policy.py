"""The adaptive policy: routes by category level, takes ε per value, never spends more than its document cap."""
import re

import pytest
from pydantic import ValidationError

from cloud_edge_privacy.desensitization import get_operator
from cloud_edge_privacy.desensitization.base import HEURISTIC, PURE, validate_params
from cloud_edge_privacy.desensitization.policy import DEFAULT_DOCUMENT_EPSILON, DEFAULT_VALUE_EPSILON
from cloud_edge_privacy.randomness import Randomness
from cloud_edge_privacy.spans import Span

TEXT = "Anna Berg, aged 51, was fined EUR 5,000 in Oslo on 3 May 1998; she paid 300 in fees and 12 more."


def spans_of(text, items):
    return [Span(text.index(s), text.index(s) + len(s), c) for s, c in items]


SPANS = spans_of(TEXT, [("Anna Berg", "PERSON"), ("aged 51", "DEM"), ("EUR 5,000", "QUANTITY"), ("Oslo", "LOC"),
                        ("3 May 1998", "DATETIME"), ("300", "QUANTITY"), ("12", "QUANTITY")])


def test_defaults_are_small():
    assert DEFAULT_VALUE_EPSILON == 1.0 and DEFAULT_DOCUMENT_EPSILON <= 10.0


def test_routes_by_level_and_charges_small_epsilon_per_value():
    r = get_operator("adaptive")(TEXT, SPANS, Randomness.benchmark(2), "d")
    assert r.methods == {"pseudonym": 1, "generalization": 3, "dp_numbers": 3}
    assert "Anna Berg" not in r.text and "Oslo" not in r.text and "5,000" not in r.text
    # three QUANTITY values at ε = 1 each (the old table spent 100-1000 per value)
    assert r.epsilon_by_kind() == {PURE: pytest.approx(3.0)}
    assert all(c.privacy_map.epsilon == 1.0 for c in r.charges if c.privacy_map.kind == PURE)
    assert {c.privacy_map.kind for c in r.charges} <= {PURE, HEURISTIC}     # pseudonyms say they are heuristic


def test_epsilon_parameter_is_used_not_dropped():
    r = get_operator("adaptive", epsilon=0.25)(TEXT, SPANS, Randomness.benchmark(2), "d")
    assert r.epsilon_by_kind() == {PURE: pytest.approx(0.75)}
    assert {c.privacy_map.epsilon for c in r.charges if c.privacy_map.kind == PURE} == {0.25}


def test_document_cap_holds_however_many_numbers():
    text = " ".join(f"He paid EUR {i}00." for i in range(1, 31))
    spans = [Span(m.start(), m.end(), "QUANTITY") for m in re.finditer(r"EUR \d+", text)]
    r = get_operator("adaptive")(text, spans, Randomness.benchmark(0), "d")
    assert r.epsilon_by_kind()[PURE] == pytest.approx(DEFAULT_DOCUMENT_EPSILON)
    placeholders = [x for x in r.replacements if x.replacement.startswith("[QUANTITY_")]
    assert len(placeholders) == 30 - int(DEFAULT_DOCUMENT_EPSILON)
    assert not any(re.search(rf"\bEUR {i}00\b", r.text) for i in range(1, 31) if i not in (1,))
    tight = get_operator("adaptive", epsilon=1.0, max_document_epsilon=2.0)(text, spans, Randomness.benchmark(0), "d")
    assert tight.epsilon_by_kind()[PURE] == pytest.approx(2.0)


def test_custom_policy_and_two_dp_operators_share_the_cap():
    policy = {5: "suppression", 3: "prism_ldp", 2: "dp_numbers"}
    op = get_operator("adaptive", policy=policy, epsilon=1.0, max_document_epsilon=4.0)
    r = op(TEXT, SPANS, Randomness.benchmark(1), "d")
    assert r.methods == {"suppression": 1, "prism_ldp": 3, "dp_numbers": 3}
    assert r.epsilon_by_kind()[PURE] <= 4.0 + 1e-9
    assert "[REDACTED]" in r.text


@pytest.mark.parametrize("params, key", [
    ({"epsilon": float("inf")}, "epsilon"), ({"epsilon": 0}, "epsilon"), ({"max_document_epsilon": -1}, "max_document"),
    ({"policy": {2: "dp_numbrs"}}, "dp_numbrs"), ({"epsilom": 1}, "epsilom"),
])
def test_bad_parameters_are_refused(params, key):
    with pytest.raises((ValidationError, KeyError), match=key):
        validate_params("adaptive", params)


def test_deployment_mode_is_not_reproducible_benchmark_is():
    dep = Randomness.deployment(b"k" * 32)
    op = get_operator("adaptive", policy={2: "dp_numbers", 3: "dp_numbers", 5: "suppression"})
    assert len({op(TEXT, SPANS, dep, "d").text for _ in range(10)}) > 1
    assert len({op(TEXT, SPANS, Randomness.benchmark(4), "d").text for _ in range(3)}) == 1


def test_generalization_on_the_new_protocol_drops_words_that_are_not_units():
    text = "He lives at 15 Baker Street, London, owes EUR 48,000 and sued the Ankara Administrative Court."
    spans = spans_of(text, [("15 Baker Street, London", "QUANTITY"), ("EUR 48,000", "QUANTITY"),
                            ("Ankara Administrative Court", "ORG")])
    r = get_operator("generalization")(text, spans, Randomness.deployment(b"k" * 32), "d")
    assert "Baker" not in r.text and "London" not in r.text and "15" not in r.text
    assert "between 10,000 and 100,000 EUR" in r.text and "sued the court" in r.text.lower()
    assert r.charges == []                         # deterministic and heuristic: no ε is claimed
    with pytest.raises(ValidationError):
        validate_params("generalization", {"date_level": "week"})


def test_generalized_ages_do_not_echo_rare_or_impossible_values():
    from cloud_edge_privacy.desensitization.generalization import generalize_age

    assert generalize_age("aged 46") == "aged 40-49"
    assert generalize_age("104 years old") == generalize_age("aged 500") == "aged 100 or over"
