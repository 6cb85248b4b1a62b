"""The window encoders' int8 products (detection/int8_encoders.py): close to float32, the same entities here."""
import numpy
import pytest
import spacy

from cloud_edge_privacy.detection.int8_encoders import GRAPHS, quantize, use_int8_encoders
from cloud_edge_privacy.detection.learned.ner import MODEL_DIR as LEARNED_DIR, MULTILINGUAL_DIR
from cloud_edge_privacy.detection.products import use_ort_products
from cloud_edge_privacy.detection.spacy_recognizer import DEFAULT_MODEL
from cloud_edge_privacy.detection.tab_ner_recognizer import SM_MODEL_DIR

TEXTS = ["Dr Anna Lindqvist of Karolinska Institutet wrote to me on 4 May 2021 about the Stockholm trial.",
         "Please ask Mr Tomasz Nowak (Nowak & Partners, Gdansk) to call 020 7946 0958 about invoice 88213.",
         "hi, my manager priya said the wexlantic account in leeds closes in june; HSBC has the papers",
         "", "The applicant, Mr Ivan Petrov, was born in 1961 and lives in Sofia, Bulgaria."]


def test_the_graph_is_committed_without_weights():
    graphs = sorted(GRAPHS.glob("window_encoder_int8_d*.onnx"))
    assert [g.name[-7:] for g in graphs] == ["d1.onnx", "d2.onnx", "d3.onnx", "d4.onnx"]
    assert all(g.stat().st_size < 4096 for g in graphs)  # shapes only, no weights


def test_quantize_keeps_each_weight_within_half_a_step():
    rng = numpy.random.default_rng(3)
    W = rng.standard_normal((6, 5)).astype("float32")
    W[2] = 0.0  # an output unit with no weights
    B, S = quantize(W)
    assert B.dtype == numpy.int8 and B.shape == (5, 6) and S.dtype == numpy.float32 and S.shape == (6,)
    assert numpy.abs(B).max() == 127 and S[2] == 1.0 and not B[:, 2].any()
    assert numpy.all(numpy.abs(B * S - W.T) <= S / 2 + 1e-7)


def _encoders(nlp):
    return [layer for _, c in nlp.pipeline if getattr(c, "model", None) is not None for layer in c.model.walk()
            if layer.name.startswith("extract_features>>") and "residual(" in layer.name
            and not layer.name.endswith(">>linear")]


@pytest.mark.parametrize("path", [DEFAULT_MODEL, str(LEARNED_DIR), str(SM_MODEL_DIR), str(MULTILINGUAL_DIR)])
def test_the_encoder_output_moves_by_a_few_percent_and_the_entities_stay(path):
    plain, quick = spacy.load(path), spacy.load(path)
    for nlp in (plain, quick):
        use_ort_products(nlp)
    blocks = sum(layer.name.count("residual(expand_window>>maxout") for layer in _encoders(quick))
    assert blocks >= 3 and use_int8_encoders(quick) == blocks  # every residual block of every encoder
    docs = [plain.make_doc(t) for t in TEXTS]
    for a, b in zip(_encoders(plain), _encoders(quick)):
        for x, y in zip(a.predict(docs), b.predict(docs)):
            assert x.shape == y.shape
            if x.size:  # a few percent of the output's scale; the learned models' wider activations move most:
                # root mean square 2.0-2.8 %, one value at most 5.8-8.0 % (spaCy's and TAB's: 1.5 % and 4.1 %)
                moved = x - y
                assert 0 < numpy.sqrt((moved ** 2).mean() / (x ** 2).mean()) <= 0.035
                assert numpy.abs(moved).max() <= 0.10 * numpy.abs(x).max()
    ents = lambda doc: [(e.start_char, e.end_char, e.label_) for e in doc.ents]  # noqa: E731
    assert [ents(d) for d in quick.pipe(TEXTS)] == [ents(d) for d in plain.pipe(TEXTS)]


def test_a_quantized_layer_refuses_training():
    nlp = spacy.load(str(LEARNED_DIR))
    use_int8_encoders(nlp)
    with pytest.raises(RuntimeError, match="cannot be trained"):
        nlp.get_pipe("ner").model.layers[0].begin_update([nlp.make_doc("Anna Berg")])


def test_layer_norm_is_thincs_bit_for_bit():
    from thinc.api import LayerNorm

    from cloud_edge_privacy.detection.thinc_layers import layer_norm

    rng = numpy.random.default_rng(11)
    for width in (64, 96):
        layer = LayerNorm(nI=width)
        layer.initialize()
        layer.set_param("G", rng.standard_normal(width).astype("float32"))
        layer.set_param("b", rng.standard_normal(width).astype("float32"))
        for rows in (1, 7, 85, 400):
            for scale in (0.01, 1.0, 60.0):
                X = (rng.standard_normal((rows, width)) * scale + scale).astype("float32")
                assert numpy.array_equal(layer_norm(X, layer.get_param("G"), layer.get_param("b")), layer.predict(X))


def test_an_encoder_of_a_depth_with_no_graph_runs_block_by_block(monkeypatch):
    """The same vectors as the whole encoder in one call."""
    from cloud_edge_privacy.detection import int8_encoders

    whole, by_block = spacy.load(str(LEARNED_DIR)), spacy.load(str(LEARNED_DIR))
    use_int8_encoders(whole)
    real = int8_encoders._graph
    monkeypatch.setattr(int8_encoders, "_graph", lambda depth: real(depth) if depth == 1 else real(99))
    assert use_int8_encoders(by_block) >= 3
    docs = [whole.make_doc(t) for t in TEXTS]
    for a, b in zip(_encoders(whole), _encoders(by_block)):
        for x, y in zip(a.predict(docs), b.predict(docs)):
            numpy.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5)
