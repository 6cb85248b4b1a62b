"""The egress guard repairs instead of refusing: what it finds in clear is masked by the same operator wherever it
occurs, then checked again; refusal only when a repair cannot make the request clean."""
import json

import pytest

from cloud_edge_privacy.core.context import RunContext
from cloud_edge_privacy.core.egress import Finding, check_egress, repair_spans
from cloud_edge_privacy.core.module_configs import CloudModelConfig
from cloud_edge_privacy.core.pipeline import EdgePipeline, EgressBlocked
from cloud_edge_privacy.spans import Span

from test_egress import Structured, _prot


class FirstOnly:
    """A detector that finds each listed surface only where it first occurs (a recognizer's miss elsewhere)."""

    name = "first-only"

    def __init__(self, *surfaces):
        self.surfaces = surfaces

    def analyze(self, text):
        out = []
        for surface, cat in self.surfaces:
            at = text.find(surface)
            if at >= 0:
                out.append(Span(at, at + len(surface), cat, 1.0, "fake"))
        return sorted(out)


def _pipe(tmp_path, detector, method="pseudonym", **params):
    config = CloudModelConfig(privacy_method=method, method_params=params)
    return EdgePipeline(RunContext(tmp_path), config, detector=detector)


def test_a_name_missed_elsewhere_is_masked_with_the_same_surrogate_instead_of_refused(tmp_path):
    text = "Dr Halvard Quist wrote the report. Ask Quist, or Halvard Quist himself, about it."
    pipe = _pipe(tmp_path, FirstOnly(("Halvard Quist", "PERSON")))
    prot, _ = pipe.protect_texts([text], scope="doc")
    sent = prot.fields[0]
    assert "Quist" not in sent and "Halvard" not in sent, sent
    assert prot.repairs and all(k.endswith("/PERSON") for k in prot.repairs), prot.repairs
    # the full name gets one surrogate everywhere, the detected occurrence's and the repaired one's
    first = next(new for s, new in prot.replaced if prot.joined[s.start:s.end] == "Halvard Quist")
    assert sent.count(first) == 2, sent
    # the repair is audited by rule and category, without the value
    log = (tmp_path / "cloud_audit.jsonl").read_text()
    event = [json.loads(line) for line in log.splitlines()][-1]
    assert event["event"] == "egress_repaired" and event["repairs"] == prot.repairs and "Quist" not in log


def test_a_repair_that_the_operator_undoes_is_still_refused(tmp_path):
    """A finding inside a span the operator keeps cannot be repaired: the request is refused."""
    text = "Meet Halvard Quist in Tromsø. Quist lives in Tromsø."
    spans = [Span(5, 18, "PERSON", 1.0, "fake")]
    prot = _prot(text, spans, [])                      # the operator replaced nothing
    findings = check_egress(prot, independent=None)
    assert findings and repair_spans(prot, findings) is None


def test_rule_two_is_never_repaired():
    prot = _prot("x", [], [])
    assert repair_spans(prot, [Finding("identifier_kept_in_replacement", "CODE", -1, "f", "0207")]) is None


def test_repair_spans_cover_every_occurrence_not_yet_masked():
    text = "John Smith met the board. Later Smith left; smith again."
    first = Span(0, 10, "PERSON")
    prot = _prot(text, [first], [(first, "[PERSON_1]")])
    findings = check_egress(prot, independent=None)
    spans = repair_spans(prot, findings)
    assert [text[s.start:s.end] for s in spans] == ["Smith", "smith"]
    assert all(s.category == "PERSON" and s.source == "guard_repair:name_token_in_clear" for s in spans)


def test_a_name_token_found_before_the_longer_value_it_is_part_of_does_not_block_its_repair():
    """pupa-171 was refused: the name token "GPT" was repaired first, so "GPT-4" (another rule's finding) had
    occurrences neither free nor inside a repair.  The longest value is repaired first, whatever the order found."""
    text = "based on GPT-4, GPT-4 Turbo and GPT-4 API"
    prot = _prot(text, [], [])
    findings = [Finding("name_token_in_clear", "PERSON", 0, "f1", "GPT"),
                Finding("independent_check_in_clear", "PERSON", 0, "f2", "GPT-4")]
    spans = repair_spans(prot, findings)
    assert spans is not None and [text[s.start:s.end] for s in spans] == ["GPT-4"] * 3
    assert repair_spans(prot, list(reversed(findings))) == spans


def test_ordinary_words_a_recognizer_called_a_person_are_not_needles():
    """Issue 28's false alarms: "score", "Managers", "lookup" once tagged PERSON, found in clear elsewhere."""
    for word, rest in (("score", "the APACHE II score was 12"), ("Managers", "Managers only"),
                       ("lookup", "call lookup(key)"), ("Revenue", "Revenue by market")):
        text = f"{word} here. {rest}."
        span = Span(0, len(word), "PERSON")
        prot = _prot(text, [span], [(span, "[PERSON_1]")])
        assert check_egress(prot, independent=None) == [], word
    # a surname stays a needle, in any case
    text = "Anna Smith came. smith left."
    span = Span(0, 10, "PERSON")
    assert check_egress(_prot(text, [span], [(span, "[PERSON_1]")]), independent=None)


def test_a_name_that_is_a_common_word_is_a_needle_only_as_written():
    text = "Mark Halvorsen signed. Mark the date; mark it."
    span = Span(0, 14, "PERSON")
    prot = _prot(text, [span], [(span, "[PERSON_1]")])
    spans = repair_spans(prot, check_egress(prot, independent=None))
    assert [text[s.start:s.end] for s in spans] == ["Mark"]       # "mark it" is kept


def test_an_organisation_of_everyday_words_is_a_needle_only_as_written():
    """"Cross-Border" the company is masked where written so; "cross-border trade" is the everyday words, as
    propagation leaves it.  An organisation with a rare word stays a needle in any case."""
    text = "Cross-Border Ltd. Cross-Border ships. We do cross-border trade."
    span = Span(0, 12, "ORG")
    prot = _prot(text, [span], [(span, "[ORG_1]")])
    spans = repair_spans(prot, check_egress(prot, independent=None))
    assert [text[s.start:s.end] for s in spans] == ["Cross-Border"]
    text = "London calling. We live in london."
    span = Span(0, 6, "LOC")
    prot = _prot(text, [span], [(span, "[LOC_1]")])
    assert [text[s.start:s.end] for s in repair_spans(prot, check_egress(prot, independent=None))] == ["london"]
    text = "Hudlvex Ltd. We like hudlvex."
    span = Span(0, 7, "ORG")
    prot = _prot(text, [span], [(span, "[ORG_1]")])
    assert [text[s.start:s.end] for s in repair_spans(prot, check_egress(prot, independent=None))] == ["hudlvex"]


def test_a_dp_noised_value_is_never_a_reason_to_refuse():
    """Under a randomized release, rule 3 ignores what is not in the input (a noised number that happens to
    look like an identifier)."""
    text = "born 1950"
    span = Span(5, 9, "DATETIME")
    prot = _prot(text, [span], [(span, "1951")])
    prot.fields[0] = "born 078-05-1120"                          # an outgoing text built around a noised value
    assert check_egress(prot, Structured(), randomized_release=True, independent=None) == []
    assert check_egress(prot, Structured(), independent=None)


def test_the_accountant_is_charged_once_for_what_is_sent(tmp_path):
    from cloud_edge_privacy.core.module_configs import CloudModelConfig

    text = "Halvard Quist, born 12 May 1950, paid 400 euros. Quist signed."
    config = CloudModelConfig(privacy_method="dp_numbers", method_params={"epsilon": 1.0},
                              budget_per_document={"pure": 100.0})
    pipe = EdgePipeline(RunContext(tmp_path), config,
                        detector=FirstOnly(("Halvard Quist", "PERSON"), ("400", "QUANTITY")))
    charged = []
    real = pipe.gateway.accountant.charge
    pipe.gateway.accountant.charge = lambda scope, charges: charged.append(len(charges)) or real(scope, charges)
    prot, _ = pipe.protect_texts([text], scope="d")
    assert prot.repairs and len(charged) == 1


def test_a_budget_overrun_still_refuses(tmp_path):
    from cloud_edge_privacy.errors import PrivacyGatewayError

    config = CloudModelConfig(privacy_method="dp_numbers", method_params={"epsilon": 1.0},
                              budget_per_document={"pure": 0.5})
    pipe = EdgePipeline(RunContext(tmp_path), config, detector=FirstOnly(("400", "QUANTITY")))
    with pytest.raises(PrivacyGatewayError):
        pipe.protect_texts(["paid 400 euros"], scope="d")


def test_a_name_in_han_or_hangul_is_found_and_repaired_without_word_edges():
    """Han and Hangul put no space between a name and what follows ("조현아가", "王小明在"): the guard finds a detected
    name's other uses there, and a repair covers them, instead of refusing the request."""
    text = "조현아 전 부사장은 사과했다. 조현아가 다시 말했다. 王小明在北京。王小明说"
    spans = [Span(0, 3, "PERSON"), Span(text.index("王小明"), text.index("王小明") + 3, "PERSON")]
    prot = _prot(text, spans, [(spans[0], "[PERSON_1]"), (spans[1], "[PERSON_2]")])
    findings = check_egress(prot, independent=None)
    assert {f.value for f in findings} == {"조현아", "王小明"}
    repaired = repair_spans(prot, findings)
    assert repaired is not None
    assert [text[s.start:s.end] for s in repaired] == ["조현아", "王小明"]
