import pytest

from cloud_edge_privacy.desensitization import get_operator
from cloud_edge_privacy.desensitization.generalization import (generalize_age, generalize_date, generalize_number,
                                                              generalize_org)
from cloud_edge_privacy.desensitization.pseudonyms import restore_answer
from cloud_edge_privacy.spans import Span

@pytest.mark.parametrize("fn, arg, expected", [
    (generalize_date, ("3 May 1961", "month"), "May 1961"),
    (generalize_date, ("3 May 1961", "year"), "1961"),
    (generalize_date, ("1961", "year"), "the 1960s"),
    (generalize_number, ("48,000 euros",), "between 10,000 and 100,000 euros"),
    (generalize_number, ("2.3 million kroner",), "between 1,000,000 and 10,000,000 kroner"),
    (generalize_age, ("aged 46",), "aged 40-49"),
    (generalize_org, ("Gdańsk Regional Court",), "a court"),
    (generalize_org, ("Baltic Fisheries Ltd",), "a company"),
    (generalize_org, ("Ministry of Education",), "a public authority"),
])
def test_generalizers(fn, arg, expected):
    assert fn(*arg) == expected


def test_generalization_operator_places_and_articles():
    text = "He lives in Gdynia and sued the Ankara Administrative Court in Atlantis."
    spans = [Span(12, 18, "LOC"), Span(32, 59, "ORG"), Span(63, 71, "LOC")]
    r = get_operator("generalization")(text, spans)
    assert r.text == "He lives in Poland and sued the court in a place."
    with pytest.raises(ValueError):
        get_operator("generalization", date_level="week")


def test_adaptive_policy_routes_by_sensitivity_and_accounts_epsilon():
    text = "Ms Anna Berg, born in 1961, lives in Oslo and claimed 48,000 euros."
    spans = [Span(0, 12, "PERSON"), Span(22, 26, "DATETIME"), Span(37, 41, "LOC"), Span(54, 66, "QUANTITY")]
    r = get_operator("adaptive")(text, spans, seed=2)
    assert r.methods == {"pseudonym": 1, "generalization": 2, "dp_numbers": 1}
    reps = {x.original: x.replacement for x in r.replacements}
    assert reps["1961"] == "the 1960s" and reps["Oslo"] == "Norway"
    assert reps["48,000 euros"].endswith("euros") and reps["48,000 euros"] != "48,000 euros"
    assert r.epsilon == 100.0                                  # one amount noised with ε=100
    assert restore_answer(f"{reps['Ms Anna Berg']} won.", r) == "Ms Anna Berg won."
    custom = get_operator("adaptive", policy={5: "suppression", 3: "keep", 2: "keep"})(text, spans)
    assert custom.text == "[REDACTED], born in 1961, lives in Oslo and claimed 48,000 euros."
