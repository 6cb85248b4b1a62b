"""spaCy's greedy NER decoder with batched products (detection/greedy_ner.py): the entities spaCy's own decoder
sets, for every NER model the presets load, on prompts, court text, whitespace and sentence starts."""
import json
from types import SimpleNamespace

import pytest
import spacy
from spacy.tokens import Span

import numpy

from cloud_edge_privacy.detection.greedy_ner import GreedyNer, _actions, _closed_choice
from cloud_edge_privacy.detection.learned.ner import MODEL_DIR as LEARNED_DIR
from cloud_edge_privacy.detection.spacy_recognizer import DEFAULT_MODEL
from cloud_edge_privacy.detection.tab_ner_recognizer import MODEL_DIR as TAB_DIR, SM_MODEL_DIR as TAB_SM_DIR

from conftest import REPO

PROMPTS = ["Dr Anna Lindqvist of Karolinska Institutet wrote to me on 4 May 2021 about the Stockholm trial.",
           "Please ask Mr Tomasz Nowak (Nowak & Partners, Gdansk) to call 020 7946 0958 about invoice 88213.",
           "My manager Priya said the Wexlantic account in Leeds closes in June; HSBC has the papers.",
           "hi, my name is chloe okonkwo and I live at 14 Elm Road, Bristol BS1 4DJ",
           "The applicant, Mr Ivan Petrov, was born in 1961 and lives in Sofia, Bulgaria.",
           "Mr  John   Smith\n\nwent to\tParis  with Mary Jones.\n \n",  # whitespace tokens inside and between names
           "Barack Obama", "Paris", "", "   ", "Angela Merkel met Emmanuel Macron in Berlin on Monday"]
MODELS = {"spacy": DEFAULT_MODEL, "tab_ner_sm": str(TAB_SM_DIR), "tab_ner": str(TAB_DIR), "learned": str(LEARNED_DIR)}


def _court_paragraphs(n=12):
    docs = json.loads((REPO / "data/tab/echr_dev.json").read_text(encoding="utf-8"))
    paragraphs = [p for d in docs[:3] for p in d["text"].split("\n") if len(p) > 200]
    return paragraphs[:n]


TEXTS = PROMPTS + _court_paragraphs()


@pytest.fixture(scope="module", params=sorted(MODELS))
def nlp(request):
    path = MODELS[request.param]
    exclude = ["tagger", "parser", "senter", "lemmatizer", "attribute_ruler", "tok2vec"] if path == DEFAULT_MODEL \
        else []
    return spacy.load(path, exclude=exclude)


def _before_ner(nlp, texts):
    docs = [nlp.make_doc(t) for t in texts]
    for name, proc in nlp.pipeline:
        if name != "ner":
            docs = list(proc.pipe(docs))
    return docs


def _ents(docs):
    return [[(e.start, e.end, e.label_) for e in doc.ents] for doc in docs]


def _spacys(nlp, docs):
    return _ents(nlp.get_pipe("ner").pipe([doc.copy() for doc in docs]))


def _ours(nlp):
    """The decoder, failing if it hands a batch to spaCy's."""
    decoder = GreedyNer(nlp.get_pipe("ner"))

    def fail(docs):
        raise AssertionError("spaCy's decoder ran")

    decoder._by_spacy = fail
    return decoder


def test_it_covers_every_ner_model_the_presets_load(nlp):
    assert GreedyNer(nlp.get_pipe("ner")).covers


def test_the_same_entities_as_spacys_decoder_text_by_text_and_in_one_batch(nlp):
    decoder = _ours(nlp)
    docs = _before_ner(nlp, TEXTS)
    expected = _spacys(nlp, docs)
    assert sum(map(len, expected)) > 30  # the texts are full of entities
    assert [_ents(decoder([doc.copy()]))[0] for doc in docs] == expected
    assert _ents(decoder([doc.copy() for doc in docs])) == expected


def test_no_entity_begins_on_whitespace_or_crosses_a_sentence_start(nlp):
    decoder = _ours(nlp)
    docs = _before_ner(nlp, TEXTS)
    for doc in docs:
        for i in range(1, len(doc)):
            doc[i].is_sent_start = i % 3 == 1  # inside most names
    expected = _spacys(nlp, docs)
    got = _ents(decoder(docs))
    assert got == expected and any(got)
    for doc, ents in zip(docs, got):
        for start, end, _ in ents:
            assert not doc[start].is_space
            assert not any(doc[i].is_sent_start for i in range(start + 1, end))


def test_entities_already_on_a_text_go_to_spacys_decoder_which_keeps_them(nlp):
    decoder = GreedyNer(nlp.get_pipe("ner"))
    doc = _before_ner(nlp, ["the weather met Barack Obama in Paris."])[0]
    doc.set_ents([Span(doc, 0, 2, label="PERSON")], default="unmodified")  # not what any model reads there
    expected = _spacys(nlp, [doc])
    got = _ents(decoder([doc]))
    assert got == expected and got[0][0] == (0, 2, "PERSON")


def test_empty_batches_and_empty_texts(nlp):
    decoder = _ours(nlp)
    assert decoder([]) == []
    docs = decoder(_before_ner(nlp, ["", ""]))
    assert [len(doc) for doc in docs] == [0, 0] and _ents(docs) == [[], []]
    text = "Angela Merkel met Emmanuel Macron in Berlin on Monday"
    docs = _ours(nlp)(_before_ner(nlp, ["", text, ""]))  # an empty text has nothing preset
    assert _ents(docs) == [[], _spacys(nlp, _before_ner(nlp, [text]))[0], []] and docs[1].ents


def _fake(names, beam_width=1, unseen=()):
    moves = SimpleNamespace(n_moves=len(names), get_class_name=lambda i: names[i])
    model = SimpleNamespace(attrs={"has_upper": True, "unseen_classes": set(unseen)}, layers=[0, 1, 2])
    return SimpleNamespace(moves=moves, cfg={"beam_width": beam_width}, model=model)


def test_an_action_table_it_does_not_know_or_a_beam_or_unseen_classes_are_left_to_spacy():
    names = ["B-PER", "I-PER", "L-PER", "U-PER", "U-", "O"]
    table = _actions(_fake(names))
    assert table is not None and table.out == 5 and table.inside == {"PER": 1} and table.last == {"PER": 2}
    assert table.begin.tolist() == [True] + [False] * 5 and table.unit.tolist() == [False] * 3 + [True, False, False]
    assert GreedyNer(_fake(names)).covers
    assert not GreedyNer(_fake(names + ["X-PER"])).covers  # an arc-eager or unknown action
    assert not GreedyNer(_fake(names[:-1])).covers  # no O
    assert not GreedyNer(_fake(["B-ORG"] + names)).covers  # an organisation could begin and never close
    assert not GreedyNer(_fake(names, beam_width=4)).covers
    assert not GreedyNer(_fake(names, unseen=(2,))).covers


def test_with_no_entity_open_the_rules_pick_among_what_they_allow():
    table = _actions(_fake(["B-PER", "I-PER", "L-PER", "U-PER", "U-", "O"]))
    best_begin = [9, 0, 0, 5, 8, 1]  # B best, then the blocked unit, U, O
    scores = numpy.array([best_begin] * 5, dtype="float32")
    space = numpy.array([False, True, False, False, False])
    next_starts = numpy.array([False, False, True, False, False])
    # whitespace: only O; before a sentence start and on the last token: no beginning
    assert _closed_choice(table, scores, space, next_starts) == [0, 5, 3, 0, 3]
    ties = numpy.array([[2, 0, 0, 2, 0, 2]], dtype="float32")
    assert _closed_choice(table, ties, numpy.array([False]), numpy.array([False])) == [3]  # the first of equals
