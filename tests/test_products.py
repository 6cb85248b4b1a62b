"""The spaCy models' layer products in ONNX Runtime (detection/products.py): the same products, the same spans."""
import pickle

import numpy
import pytest
import spacy
from thinc.api import NumpyOps

from cloud_edge_privacy.detection.products import GRAPH, OrtProducts, use_ort_products
from cloud_edge_privacy.detection.spacy_recognizer import DEFAULT_MODEL, load_spacy

RNG = numpy.random.default_rng(7)


def _matrix(*shape, dtype="float32"):
    return RNG.standard_normal(shape).astype(dtype)


@pytest.fixture(scope="module")
def ops():
    return OrtProducts()


def test_the_graph_is_the_committed_one_node_product():
    assert GRAPH.is_file() and GRAPH.stat().st_size < 1024  # no weights: both matrices are inputs


@pytest.mark.parametrize("m, k, n", [(82, 288, 288), (1, 96, 74), (300, 96, 384)])
def test_a_forward_product_is_x_times_w_transposed(ops, m, k, n):
    x, w = _matrix(m, k), _matrix(n, k)
    got = ops.gemm(x, w, trans2=True)
    assert got.shape == (m, n) and got.dtype == numpy.float32
    numpy.testing.assert_allclose(got, x @ w.T, rtol=1e-4, atol=1e-4)


def test_a_product_into_a_given_buffer_fills_and_returns_it(ops):
    x, w = _matrix(5, 8), _matrix(3, 8)
    out = numpy.full((5, 3), 99.0, dtype="float32")
    assert ops.gemm(x, w, out=out, trans2=True) is out
    numpy.testing.assert_allclose(out, x @ w.T, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kwargs, shapes", [({}, ((4, 6), (6, 3))), ({"trans1": True}, ((6, 4), (6, 3))),
                                            ({"trans1": True, "trans2": True}, ((6, 4), (3, 6)))])
def test_other_products_are_thincs_own(ops, kwargs, shapes):
    x, y = _matrix(*shapes[0]), _matrix(*shapes[1])
    numpy.testing.assert_allclose(ops.gemm(x, y, **kwargs), NumpyOps().gemm(x, y, **kwargs), rtol=1e-5, atol=1e-5)


def test_an_empty_batch_is_an_empty_product(ops):
    assert ops.gemm(_matrix(0, 8), _matrix(3, 8), trans2=True).shape == (0, 3)


def test_the_ops_survive_pickling(ops):
    again = pickle.loads(pickle.dumps(ops))
    x, w = _matrix(4, 8), _matrix(2, 8)
    numpy.testing.assert_allclose(again.gemm(x, w, trans2=True), ops.gemm(x, w, trans2=True))


TEXTS = ["Dr Anna Lindqvist of Karolinska Institutet wrote to me on 4 May 2021 about the Stockholm trial.",
         "Please ask Mr Tomasz Nowak (Nowak & Partners, Gdansk) to call 020 7946 0958 about invoice 88213.",
         "My manager Priya said the Wexlantic account in Leeds closes in June; HSBC has the papers.",
         "The applicant, Mr Ivan Petrov, was born in 1961 and lives in Sofia, Bulgaria."]


def test_a_models_layers_multiply_in_onnx_runtime_and_find_the_same_entities():
    """The default preset's spaCy model, as the recognizers load it, against spaCy as installed (BLIS)."""
    nlp = load_spacy().nlp
    layers = [layer for _, c in nlp.pipeline if getattr(c, "model", None) is not None for layer in c.model.walk()]
    assert layers and all(isinstance(layer.ops, OrtProducts) for layer in layers)
    plain = spacy.load(DEFAULT_MODEL, exclude=["tok2vec", "tagger", "parser", "senter", "lemmatizer",
                                               "attribute_ruler"])
    assert not isinstance(plain.get_pipe("ner").model.ops, OrtProducts)
    ents = lambda doc: [(e.start_char, e.end_char, e.label_) for e in doc.ents]  # noqa: E731
    got = load_spacy().read(TEXTS, ents)
    assert any(got) and got == [ents(plain(t)) for t in TEXTS]


def test_use_ort_products_reaches_every_trainable_component():
    nlp = spacy.load(DEFAULT_MODEL)  # the full pipeline: a shared tok2vec, tagger, parser and NER
    use_ort_products(nlp)
    for name in ("tok2vec", "tagger", "parser", "ner"):
        assert all(isinstance(layer.ops, OrtProducts) for layer in nlp.get_pipe(name).model.walk()), name
