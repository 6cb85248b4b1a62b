"""Clinical words and values identify nobody: the default detector leaves them in clear, and keeps masking the
identifiers written beside them (names, record numbers, dates of birth, hospitals)."""
import pytest

from cloud_edge_privacy.detection.clinical import CLINICAL_TERMS, RECORD_LABELS, clinical_word, drug_names, measurements
from cloud_edge_privacy.detection.trade_terms import trade_phrases, trade_trim
from cloud_edge_privacy.lexicon import known_names
from cloud_edge_privacy.detection import build_detector


@pytest.fixture(scope="module")
def default():
    return build_detector("default")


def _trim(text: str, surface: str):
    start = text.index(surface)
    out = trade_trim(text, start, start + len(surface), trade_phrases(text))
    return None if out is None else text[out[0]:out[1]]


def test_drug_names_come_from_the_dictionary_without_person_names():
    drugs = drug_names()
    assert {"metformin", "lisinopril", "spironolactone", "paracetamol", "clarithromycin"} <= drugs
    assert "senna" not in drugs and "armin" not in drugs  # also first names: never read as drugs
    assert clinical_word("Troponin") and clinical_word("CRP") and not clinical_word("Pierce")
    assert not (CLINICAL_TERMS | RECORD_LABELS) & known_names()  # the hand-written list holds no name either


def test_procedures_diagnoses_scores_and_ward_abbreviations_are_clinical_words():
    """A surgical handover typed as a user (session 21) went out with "hemicolectomy" as a placeholder and "NBM",
    "PCA" as organisations; "the APGAR components" with the score as a company."""
    for word in ("hemicolectomy", "Cholecystitis", "anaemia", "laparotomies", "chickenpox", "NBM", "PCA", "APGAR",
                 "NIHSS"):
        assert clinical_word(word), word
    for word in ("Curtis", "Otis", "Roma", "Oklahoma", "edit", "Margit"):
        assert not clinical_word(word), word


def test_a_surgical_handover_keeps_its_clinical_words(default):
    text = ("Bed 7, Mr Tobias Klein, post-op day 2 right hemicolectomy, NBM, IV fluids, PCA morphine, obs stable. "
            "Make a table of the APGAR components.")
    masked = {text[s.start:s.end] for s in default.analyze(text)}
    assert "Mr Tobias Klein" in masked or "Tobias Klein" in masked
    assert not masked & {"hemicolectomy", "NBM", "PCA", "PCA morphine", "APGAR"}, masked


@pytest.mark.parametrize("text, value", [
    ("Temperature 39.2 C, heart rate 112 bpm", "39.2 C"),
    ("blood pressure 90/60 mmHg today", "90/60 mmHg"),
    ("lactate 4.1 mmol/L. Does", "4.1 mmol/L"),
    ("WBC 14.2, CRP 85.", "WBC 14.2"),
    ("HbA1c 8.4% last week", "HbA1c 8.4%"),
    ("ECG showed ST depression in V4-V6", "V4-V6"),
])
def test_clinical_values_are_found(text, value):
    start = text.index(value)
    assert (start, start + len(value)) in measurements(text)


def test_a_date_or_a_record_number_is_no_clinical_value():
    text = "DOB 14/02/1958, MRN 12345678, K 5.1"
    found = [text[a:b] for a, b in measurements(text)]
    assert found == ["K 5.1"]
    assert _trim(text, "DOB 14/02/1958") == "14/02/1958"  # the label goes, the date stays masked
    assert _trim(text, "MRN 12345678") == "12345678"


def test_clinical_spans_are_dropped_or_trimmed_to_what_identifies():
    text = "Mrs Senna Patel takes aspirin 75 mg daily; insulin glargine 20 units; 45 ng/L, ECG showed ST depression"
    assert _trim(text, "Mrs Senna Patel takes aspirin 75 mg") == "Mrs Senna Patel"
    assert _trim(text, "insulin glargine 20 units") is None
    assert _trim(text, "45 ng/L, ECG showed ST depression") is None
    assert _trim(text, "Senna Patel") == "Senna Patel"  # nothing clinical: unchanged


@pytest.mark.parametrize("text", [
    "Troponin was 45 ng/L, ECG showed ST depression in V4-V6. What is the next step?",
    "She is on insulin glargine 20 units at night and metformin 1000 mg twice daily; HbA1c 8.4%.",
    "Temperature 39.2 C, heart rate 112 bpm, blood pressure 90/60 mmHg, lactate 4.1 mmol/L. Does this meet sepsis "
    "criteria?",
    "Potassium 5.9 mmol/L and creatinine 180 umol/L in a patient on lisinopril and spironolactone.",
])
def test_the_default_detector_leaves_clinical_questions_in_clear(default, text):
    assert [text[s.start:s.end] for s in default.analyze(text)] == []


def test_identifiers_beside_clinical_words_stay_masked(default):
    text = ("Discharge letter for Mr. Alan Pierce, DOB 14/02/1958, MRN 12345678, treated with amoxicillin and "
            "clarithromycin; creatinine 180 umol/L.")
    masked = [text[s.start:s.end] for s in default.analyze(text)]
    for identifier in ("Alan Pierce", "14/02/1958", "12345678"):
        assert any(identifier in m for m in masked), (identifier, masked)
    for word in ("amoxicillin", "clarithromycin", "creatinine", "180"):
        assert not any(word in m for m in masked), (word, masked)


def test_the_gateway_sends_a_clinical_question_unchanged(monkeypatch):
    from cloud_edge_privacy import Gateway

    monkeypatch.setenv("CEP_SECRET_KEY", "00" * 32)
    text = "Potassium 5.9 mmol/L and creatinine 180 umol/L in a patient on lisinopril. What should I do?"
    assert Gateway("pseudonym").protect(text).text == text


def test_the_gateway_sends_a_clinicians_literature_links_and_masks_the_patient(monkeypatch):
    """Typed as a user (session 18): the hosts were masked, and then, in a step of the public-host rule, the
    encoder's "nature" of "(nature.com)" became a surrogate inside the host, which the egress guard refused."""
    from cloud_edge_privacy import Gateway

    monkeypatch.setenv("CEP_SECRET_KEY", "ab" * 32)
    text = "Summarise https://pubmed.ncbi.nlm.nih.gov/24621041/ and (nature.com) for Anna Berg; see nice.org.uk"
    out = Gateway("pseudonym").protect(text).text
    for public in ("https://pubmed.ncbi.nlm.nih.gov/24621041/", "(nature.com)", "nice.org.uk"):
        assert public in out, out
    assert "Anna" not in out and "Berg" not in out, out
