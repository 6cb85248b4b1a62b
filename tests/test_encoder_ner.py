"""The encoder recognizer: windowing and span building (always), and the shipped model on a few texts and on
the trap words of issue 28 (when the model is in the package; it is built by scripts/train_encoder_ner.py)."""
from __future__ import annotations

import numpy as np
import pytest

from cloud_edge_privacy.detection.encoder_ner import (MODEL_DIR, EncoderNerRecognizer, _windows, bio_labels,
                                                      load_encoder)
from cloud_edge_privacy.errors import ModelFileError
from cloud_edge_privacy.spans import Span


def test_windows_keep_every_token_once():
    for n in (1, 50, 126, 127, 300, 1000):
        cover = [0] * n
        for s, e, kf, kt in _windows(n, 126):
            assert 0 <= s <= kf < kt <= e <= n and e - s <= 126
            for i in range(kf, kt):
                cover[i] += 1
        assert cover == [1] * n


def test_spans_from_token_labels_are_widened_to_words():
    labels = bio_labels()
    text = "Call Annabel Smithers-Jones at Acme now"
    # tokens: call | anna | ##bel | smithers | - | jones | at | acme | now
    offsets = [(0, 4), (5, 9), (9, 12), (13, 21), (21, 22), (22, 27), (28, 30), (31, 35), (36, 39)]
    tags = ["O", "B-PERSON", "I-PERSON", "I-PERSON", "I-PERSON", "O", "O", "B-ORG", "O"]
    probs = np.full((len(tags), len(labels)), 0.01, dtype=np.float32)
    for i, t in enumerate(tags):
        probs[i, labels.index(t)] = 0.9
    spans = EncoderNerRecognizer._spans(text, offsets, probs, labels)
    # "jones" was labelled O, but the span ends inside the word "Smithers-Jones": widened to its end
    assert [(s.text(text), s.category, s.source) for s in spans] == [
        ("Annabel Smithers-Jones", "PERSON", "encoder:PERSON"), ("Acme", "ORG", "encoder:ORG")]
    assert all(isinstance(s, Span) and 0 < s.score <= 1 for s in spans)


def test_cjk_spans_are_dropped_latin_ones_kept():
    # trained on Latin script only: on Chinese its labels are noise (it named single characters of a dev prompt)
    labels = bio_labels()
    text = "我叫张伟 Anna Berg"
    offsets = [(i, i + 1) for i in range(4)] + [(5, 9), (10, 14)]
    probs = np.zeros((len(offsets), len(labels)), dtype=np.float32)
    probs[:, 0] = 1.0
    for i, t in ((2, "B-PERSON"), (3, "I-PERSON"), (4, "B-PERSON"), (5, "I-PERSON")):
        probs[i] = 0.0
        probs[i, labels.index(t)] = 1.0
    spans = EncoderNerRecognizer._spans(text, offsets, probs, labels)
    assert [(s.text(text), s.category) for s in spans] == [("Anna Berg", "PERSON")]


def test_spans_in_other_scripts_are_dropped_accented_latin_kept():
    labels = bio_labels()
    text = "Иван Петров José Müller"
    offsets = [(0, 4), (5, 11), (12, 16), (17, 23)]
    probs = np.zeros((len(offsets), len(labels)), dtype=np.float32)
    for i, t in enumerate(("B-PERSON", "I-PERSON", "B-PERSON", "I-PERSON")):
        probs[i, labels.index(t)] = 1.0
    spans = EncoderNerRecognizer._spans(text, offsets, probs, labels)
    assert [(s.text(text), s.category) for s in spans] == [("José Müller", "PERSON")]


def test_missing_model_is_a_clear_error(tmp_path):
    with pytest.raises(ModelFileError, match="train_encoder_ner.py"):
        EncoderNerRecognizer(str(tmp_path)).check()


def _model_or_skip() -> EncoderNerRecognizer:
    if not (MODEL_DIR / "model.onnx").is_file():
        pytest.skip(f"{MODEL_DIR}/model.onnx not built (scripts/train_encoder_ner.py --fold all)")
    pytest.importorskip("onnxruntime", reason="the [encoder] extra is not installed")
    rec = EncoderNerRecognizer()
    rec.check()
    return rec


def _covered(text: str, spans, word: str, category: str = "") -> bool:
    i = text.index(word)
    return any(s.start <= i and i + len(word) <= s.end and (not category or s.category == category) for s in spans)


def test_names_and_places_in_context():
    rec = _model_or_skip()
    text = ("Please rewrite my cover letter. My name is Priya Deshmukh, I live in Pune, Maharashtra, and I worked "
            "for ExxonMobil for four years.")
    spans = rec.analyze(text)
    assert _covered(text, spans, "Priya Deshmukh", "PERSON")
    assert _covered(text, spans, "Pune")
    assert _covered(text, spans, "ExxonMobil")
    for s in spans:  # offsets point into the text, on word boundaries
        assert s.text(text).strip() == s.text(text) and s.source == f"encoder:{s.category}"


def test_trap_words_are_not_persons():
    rec = _model_or_skip()
    texts = {
        "var": "In C#, is `var result = Compute(peer);` slower than an explicit type?",
        "score": "The APACHE II score on admission was 27, what mortality does that predict?",
        "Managers": "Managers of every branch should approve the rota by Monday.",
        "Uni": "Is the Changan Uni-v a reliable car for a family?",
        "Revenue": "Revenue rose 4% in the third quarter while the market for tablets shrank.",
        "lookup": "The assistant may call the tool `lookup` to search the knowledge base.",
    }
    found = rec.analyze_many(list(texts.values()))
    for (word, text), spans in zip(texts.items(), found):
        assert not _covered(text, spans, word, "PERSON"), (word, [(s.text(text), s.category) for s in spans])


def test_logits_do_not_depend_on_the_thread_count():
    rec = _model_or_skip()
    text = "Dear Mr Okonkwo, the invoice for Lagos Freight Ltd (order 4471) is attached; call 0803 555 0199."
    logits = []
    for threads in (1, 2, 3):
        m = load_encoder(rec.path, threads)
        ids = np.array([[m.cls, *m.tok.encode(text, add_special_tokens=False).ids, m.sep]])
        logits.append(m.sess.run(["logits"], {"input_ids": ids, "attention_mask": np.ones_like(ids)})[0])
    assert logits[0].shape[1] > 20
    assert all(np.array_equal(logits[0], other) for other in logits[1:])
    assert EncoderNerRecognizer(rec.path, threads=2).analyze(text) == EncoderNerRecognizer(rec.path).analyze(text)


def test_long_text_is_windowed():
    rec = _model_or_skip()
    filler = "The committee reviewed the annual budget and the maintenance plan for the building. " * 30
    text = filler + "The complaint was filed by Mr Jonathan Whitfield on behalf of his neighbours. " + filler
    m = load_encoder(rec.path, rec.threads)
    assert len(m.tok.encode(text, add_special_tokens=False).ids) > 3 * m.max_len
    spans = rec.analyze(text)
    assert _covered(text, spans, "Jonathan Whitfield", "PERSON")


def test_states_and_public_institutions_are_not_the_encoders_to_mask():
    """With ``drop_public_institutions`` (the default preset), the States and public bodies court texts name as
    parties are dropped, whatever category the encoder gave them; an organisation in capitals is kept."""
    from cloud_edge_privacy.detection.encoder_ner import _public

    for surface, cat in (("United Kingdom", "ORG"), ("of Turkey", "ORG"), ("Great Britain and Northern Ireland", "LOC"),
                         ("Foreign and Commonwealth Office", "ORG"), ("Ministry of the Interior", "ORG")):
        assert _public(surface, cat), surface
    for surface, cat in (("AUSTRALIAN AND NEW ZEALAND COLLEGE OF ANAESTHETISTS", "ORG"), ("Hudl", "ORG"),
                         ("Nordvik Consulting", "ORG"), ("Anna Berg", "PERSON")):
        assert not _public(surface, cat), surface


def test_wnut_records_read_the_shipped_corpus(tmp_path):
    """WNUT-17 (data/wnut17, CC-BY 4.0) as training records: texts rebuilt from tokens, mentions mapped to TAB
    categories, a seeded sample; an unknown label is an error naming the line."""
    import sys

    from conftest import REPO

    sys.path.insert(0, str(REPO / "scripts"))
    from train_encoder_ner import wnut_records

    small = tmp_path / "w.conll"
    small.write_text("Ann\tB-person\nLee\tI-person\nat\tO\nAcme\tB-corporation\n\t\nhi\tO\n", encoding="utf-8")
    recs = sorted(wnut_records(small, 10, 0))
    assert recs == [("Ann Lee at Acme", [(0, 7, "PERSON"), (11, 15, "ORG")]), ("hi", [])]
    small.write_text("Ann\tB-alien\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"w.conll:1: unknown label 'B-alien'"):
        wnut_records(small, 10, 0)
    full = wnut_records(REPO / "data" / "wnut17" / "wnut17train.conll", 10 ** 6, 13)
    assert len(full) == 3394 and wnut_records(REPO / "data" / "wnut17" / "wnut17train.conll", 5, 13) == full[:5]
    assert {c for _, ents in full for _, _, c in ents} == {"PERSON", "LOC", "ORG", "MISC"}
