import pytest

from cloud_edge_privacy.desensitization import get_operator
from cloud_edge_privacy.desensitization.generalization import (generalize_age, generalize_date, generalize_number,
                                                              generalize_org)
from cloud_edge_privacy.desensitization.pseudonyms import PseudonymVault, restore_answer
from cloud_edge_privacy.spans import Span

TEXT = "Ms Anna Berg lives in Oslo. Berg was born on 3 May 1961; application no. 36110/97."
SPANS = [Span(0, 12, "PERSON"), Span(22, 26, "LOC"), Span(28, 32, "PERSON"), Span(45, 55, "DATETIME"),
         Span(73, 81, "CODE")]


def test_pseudonyms_are_consistent_and_hide_the_originals():
    r = get_operator("pseudonym")(TEXT, SPANS, seed=3)
    for original in ("Anna", "Berg", "Oslo", "1961", "36110/97"):
        assert original not in r.text
    full, surname = r.replacements[0].replacement, r.replacements[2].replacement
    assert full.startswith("Ms ") and full.endswith(surname)       # "Berg" alone maps to the same surname
    code = r.replacements[4].replacement
    assert len(code) == len("36110/97") and code[5] == "/"          # format preserved
    assert get_operator("pseudonym")(TEXT, SPANS, seed=3).text == r.text
    assert get_operator("pseudonym")(TEXT, SPANS, seed=4).text != r.text


def test_same_value_same_surrogate_across_documents_of_a_session():
    vault = PseudonymVault(seed=1)
    op = get_operator("pseudonym", vault=vault)
    a = op("Oslo is cold.", [Span(0, 4, "LOC")])
    b = op("We met in Oslo.", [Span(10, 14, "LOC")])
    assert a.replacements[0].replacement == b.replacements[0].replacement


def test_restore_is_exact_and_tolerates_case_and_inflection():
    r = get_operator("pseudonym")(TEXT, SPANS, seed=3)
    sur_full = r.replacements[0].replacement                 # e.g. "Ms Nils Engel"
    surname = r.replacements[2].replacement
    place = r.replacements[1].replacement
    answer = f"{sur_full} lives in {place}. {surname.upper()}'s appeal failed; the {surname}s moved."
    restored = restore_answer(answer, r)
    assert restored == "Ms Anna Berg lives in Oslo. BERG's appeal failed; the Bergs moved."
    # every surrogate maps back to its original
    assert restore_answer(r.text, r) == TEXT


def test_placeholder_fallback_when_nothing_can_be_replaced():
    r = get_operator("pseudonym")("It lasted seven years.", [Span(10, 21, "DATETIME")], seed=0)
    assert r.text == "It lasted [DATETIME_1]."
    assert restore_answer("After [DATETIME_1].", r) == "After seven years."


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
