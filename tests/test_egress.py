"""The egress guard's rules, on hand-made protection results (rules 1-3 with rule 4 off; rule 4 with a fake and
with its real recognizers)."""
from cloud_edge_privacy.desensitization.base import Desensitized, Replacement
from cloud_edge_privacy.core.egress import check_egress
from cloud_edge_privacy.core.gateway import ProtectedFields
from cloud_edge_privacy.spans import Span


def _prot(original, spans, replacements):
    """A ProtectedFields for one field, from (span, replacement) pairs applied left to right."""
    out, reps, cur, shift = [], [], 0, 0
    for span, new in sorted(replacements, key=lambda r: r[0].start):
        out.append(original[cur:span.start])
        ns = span.start + shift
        reps.append(Replacement(span.start, span.end, ns, ns + len(new), span.category, original[span.start:span.end], new))
        out.append(new)
        shift += len(new) - (span.end - span.start)
        cur = span.end
    out.append(original[cur:])
    text = "".join(out)
    res = Desensitized(text, reps, "test")
    untouched, c = [], 0
    for r in reps:
        if r.new_start > c:
            untouched.append((c, r.new_start))
        c = r.new_end
    if len(text) > c:
        untouched.append((c, len(text)))
    return ProtectedFields([original], [text], "test", spans, res, [untouched],
                           [(Span(r.start, r.end, r.category), r.replacement) for r in reps], original)


class Structured:
    def analyze(self, text):
        import re

        return [Span(m.start(), m.end(), "CODE", 1.0, "regex:ssn") for m in re.finditer(r"\d{3}-\d{2}-\d{4}", text)]


def test_a_missed_mention_in_clear_is_found():
    text = "John Smith met the board. Later Smith left."
    first = Span(0, 10, "PERSON")
    prot = _prot(text, [first], [(first, "[PERSON_1]")])        # the second "Smith" was not detected
    findings = check_egress(prot, independent=None)
    assert [f.rule for f in findings] == ["name_token_in_clear"] and "Smith" not in findings[0].describe()


def test_a_replacement_that_keeps_part_of_the_identifier_is_found():
    text = "Call 0207 946 0958 now."
    code = Span(5, 18, "CODE")
    prot = _prot(text, [code], [(code, "0207 111 2222")])           # the operator kept the area code
    assert [f.rule for f in check_egress(prot, independent=None)] == ["identifier_kept_in_replacement"]


def test_structured_identifiers_must_be_our_own_surrogates():
    text = "SSN 078-05-1120 of [PERSON_1]."
    prot = _prot(text, [], [])
    assert [f.rule for f in check_egress(prot, Structured(), independent=None)] == ["structured_identifier_in_clear"]
    text2 = "SSN 078-05-1120."
    span = Span(4, 15, "CODE")
    prot2 = _prot(text2, [span], [(span, "512-44-9087")])           # a surrogate that looks like an SSN
    assert check_egress(prot2, Structured(), independent=None) == []


def test_generalised_places_are_allowed_and_clean_text_passes():
    text = "She moved from Oslo to Bergen in 2001."
    a, b = Span(15, 19, "LOC"), Span(23, 29, "LOC")
    prot = _prot(text, [a, b], [(a, "Norway"), (b, "Norway")])
    assert check_egress(prot, Structured()) == []


def test_the_unprotected_baseline_is_not_checked():
    prot = ProtectedFields(["John Smith"], ["John Smith"], "none", [], None, [[(0, 10)]], [], "John Smith")
    assert check_egress(prot) == []


class FakeIndependent:
    """Finds every listed surface as a PERSON (a stand-in for rule 4's recognizers)."""

    def __init__(self, *names):
        self.names = names

    def analyze(self, text):
        import re

        return [Span(m.start(), m.end(), "PERSON", 1.0, "fake") for n in self.names for m in re.finditer(re.escape(n), text)]


def test_independent_check_blocks_a_name_the_detector_missed_but_not_inside_replacements():
    text = "Ask mary jones; [PERSON_1] agrees."
    prot = _prot("Ask mary jones; Anna Berg agrees.", [Span(16, 25, "PERSON")], [(Span(16, 25, "PERSON"), "[PERSON_1]")])
    assert prot.fields[0] == text
    found = check_egress(prot, independent=FakeIndependent("mary jones"))
    assert [f.rule for f in found] == ["independent_check_in_clear"] and "mary" not in found[0].describe()
    # a name the checker finds inside a surrogate (the pseudonym method's output) is not a finding
    assert check_egress(prot, independent=FakeIndependent("[PERSON_1]")) == []


def test_independent_check_uses_its_own_recognizers_by_default():
    """Issue 18: "mary jones" reached the cloud under every method and the guard let it pass."""
    prot = _prot("please email mary jones and 张伟 today", [], [])
    rules = [f.rule for f in check_egress(prot)]
    assert rules.count("independent_check_in_clear") >= 1, rules
    clean = _prot("please summarise the attached quarterly report", [], [])
    assert check_egress(clean) == []


def test_timings_per_rule_and_the_same_findings_with_them():
    prot = _prot("Ask mary jones; Anna Berg agrees.", [Span(16, 25, "PERSON")], [(Span(16, 25, "PERSON"), "[PERSON_1]")])
    timings = {}
    found = check_egress(prot, Structured(), independent=FakeIndependent("mary jones"), timings=timings)
    assert found == check_egress(prot, Structured(), independent=FakeIndependent("mary jones"))
    assert sorted(timings) == ["rule1", "rule2", "rule3", "rule4"] and all(v >= 0 for v in timings.values())


def test_independent_check_reads_a_text_once_and_answers_repeats_from_its_cache():
    from cloud_edge_privacy.core.egress import IndependentCheck

    check = IndependentCheck(cache_size=2)
    calls = []
    real = check.learned.analyze_many
    check.learned.analyze_many = lambda texts: calls.append(list(texts)) or real(texts)
    texts = ["please email mary jones today", "Summarise the text.", "nothing here"]
    first = check.analyze_many(texts[:2])
    assert first == check.analyze_many(texts[:2]) and [s.category for s in first[0]].count("PERSON") >= 1
    assert calls == [texts[:2]]                                  # the repeat read nothing again
    check.analyze_many([texts[2]])                               # evicts the oldest (size 2)
    assert check.analyze(texts[0]) == first[0] and calls[-1] == [texts[0]]


def test_the_guard_reads_sentences_in_other_languages_with_the_other_language_model():
    """The English model reads everyday Russian words as people ("свалить вину"); with the model of other
    languages (as the default's guard is built) they are no finding, and the names in either language still are."""
    from cloud_edge_privacy.core.egress import IndependentCheck
    from cloud_edge_privacy.detection.learned.ner import MULTILINGUAL_DIR

    text = ("Эти попытки свалить вину на американцев, были не только не корректными, но и не способствовали "
            "выяснению истинных причин произошедшего. Вчера Веселин Топалов приехал. Anna Berg wrote to John Smith.")
    english_only = {text[s.start:s.end] for s in IndependentCheck(cache_size=0).analyze(text)}
    routed = {text[s.start:s.end] for s in IndependentCheck(cache_size=0,
                                                            other_languages_path=str(MULTILINGUAL_DIR)).analyze(text)}
    assert "свалить вину" in english_only  # what the routing is for
    assert not any(w in v for v in routed for w in ("свалить", "вину", "причин"))
    assert {"Anna Berg", "John Smith"} <= routed and any("Топалов" in v for v in routed)


def test_an_everyday_organisation_in_lower_case_is_looked_for_only_where_found():
    """A model's lower-case "data" read as a company is masked where found; the guard does not refuse or repair its
    other lower-case uses (co-reference does not copy them either), but a town typed in lower case still counts."""
    text = "We sell data to firms. The data team grows."
    data = Span(8, 12, "ORG", 0.8, "encoder:ORG")
    prot = _prot(text, [data], [(data, "Acme")])
    assert check_egress(prot, independent=None) == []
    town = "I moved to leeds in May. leeds is cold."
    leeds = Span(11, 16, "LOC", 0.8, "encoder:LOC")
    prot = _prot(town, [leeds], [(leeds, "York")])
    assert [f.rule for f in check_egress(prot, independent=None)] == ["identifier_in_clear"]
    firm = "I work at Apple Store. apple store staff are kind."   # as written, it is still looked for
    store = Span(10, 21, "ORG", 0.8, "spacy:ORG")
    prot = _prot(firm, [store], [(store, "Acme Ltd")])
    assert check_egress(prot, independent=None) == []
    prot = _prot("I work at Apple Store. Apple Store staff are kind.", [store], [(store, "Acme Ltd")])
    assert [f.rule for f in check_egress(prot, independent=None)] == ["identifier_in_clear"]
