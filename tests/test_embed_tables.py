"""The hash embeddings' first product made at load (detection/embed_tables.py): the same vectors, the same spans."""
import numpy
import pytest
import spacy

from cloud_edge_privacy.detection.embed_tables import use_embed_tables
from cloud_edge_privacy.detection.learned.ner import MODEL_DIR as LEARNED_DIR
from cloud_edge_privacy.detection.learned.ner import load_learned
from cloud_edge_privacy.detection.spacy_recognizer import DEFAULT_MODEL, load_spacy
from cloud_edge_privacy.detection.tab_ner_recognizer import SM_MODEL_DIR, load_tab_ner

TEXTS = ["Dr Anna Lindqvist of Karolinska Institutet wrote to me on 4 May 2021 about the Stockholm trial.",
         "Please ask Mr Tomasz Nowak (Nowak & Partners, Gdansk) to call 020 7946 0958 about invoice 88213.",
         "hi, my manager priya said the wexlantic account in leeds closes in june; HSBC has the papers",
         "", "   ", "The applicant, Mr Ivan Petrov, was born in 1961 and lives in Sofia, Bulgaria.\n\nOK"]
MODELS = [DEFAULT_MODEL, str(LEARNED_DIR), str(SM_MODEL_DIR)]


def _embeddings(nlp):
    """Every MultiHashEmbed layer of ``nlp`` (the first layer of each embedding and encoder)."""
    return [layer for _, c in nlp.pipeline if getattr(c, "model", None) is not None for layer in c.model.walk()
            if layer.name.startswith("extract_features>>")
            and layer.name.endswith(">>ragged2list") and "expand_window" not in layer.name]


@pytest.mark.parametrize("path", MODELS)
def test_the_tables_give_the_same_vectors_as_the_product(path):
    plain, tabled = spacy.load(path), spacy.load(path)
    assert use_embed_tables(tabled) >= 1
    pairs = list(zip(_embeddings(plain), _embeddings(tabled)))
    assert pairs
    for texts in ([t] for t in TEXTS):  # one text a batch, then all together
        docs = [plain.make_doc(t) for t in texts]
        for a, b in pairs:
            for x, y in zip(a.predict(docs), b.predict(docs)):
                assert x.shape == y.shape and x.dtype == y.dtype == numpy.float32
                numpy.testing.assert_allclose(x, y, rtol=1e-4, atol=1e-4)
    docs = [plain.make_doc(t) for t in TEXTS]
    for a, b in pairs:
        for x, y in zip(a.predict(docs), b.predict(docs)):
            numpy.testing.assert_allclose(x, y, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("load, path", [(load_spacy, None), (load_learned, str(LEARNED_DIR)),
                                        (load_tab_ner, str(SM_MODEL_DIR))])
def test_the_pipelines_the_recognizers_load_find_the_entities_spacy_finds(load, path):
    pipeline = load(path) if path else load()
    assert all(layer._func.__module__ == "cloud_edge_privacy.detection.embed_tables"
               for layer in _embeddings(pipeline.nlp))
    plain = spacy.load(path or DEFAULT_MODEL)
    ents = lambda doc: [(e.start_char, e.end_char, e.label_) for e in doc.ents]  # noqa: E731
    got = pipeline.read(TEXTS, ents)
    assert any(got) and got == [ents(plain(t)) for t in TEXTS]


def test_a_tabled_layer_refuses_training():
    nlp = spacy.load(str(LEARNED_DIR))
    use_embed_tables(nlp)
    layer = _embeddings(nlp)[0]
    with pytest.raises(RuntimeError, match="cannot be trained"):
        layer.begin_update([nlp.make_doc("Anna Berg")])


def test_another_layout_is_left_as_it_is():
    nlp = spacy.blank("en")
    nlp.add_pipe("ner").add_label("PERSON")
    nlp.initialize()
    layers = [layer for layer in nlp.get_pipe("ner").model.walk()]
    before = [layer._func for layer in layers]
    assert use_embed_tables(nlp) == 1  # the default NER's own embedding: four hash tables, as the models'
    nlp2 = spacy.blank("en")
    nlp2.add_pipe("ner", config={"model": {"@architectures": "spacy.TransitionBasedParser.v2", "state_type": "ner",
                                           "extra_state_tokens": False, "hidden_width": 16, "maxout_pieces": 2,
                                           "use_upper": True, "tok2vec": {
                                               "@architectures": "spacy.Tok2Vec.v2",
                                               "embed": {"@architectures": "spacy.CharacterEmbed.v2", "width": 32,
                                                         "rows": 100, "nM": 16, "nC": 4,
                                                         "include_static_vectors": False},
                                               "encode": {"@architectures": "spacy.MaxoutWindowEncoder.v2",
                                                          "width": 32, "depth": 1, "window_size": 1,
                                                          "maxout_pieces": 2}}}}).add_label("PERSON")
    nlp2.initialize()
    assert use_embed_tables(nlp2) == 0  # a character embedding: no hash tables to fold
    assert len(before) == len(layers)
