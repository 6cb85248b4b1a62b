"""The spaCy models' window encoders with int8 products: the largest products a model makes per text.

Each residual block of a model's encoder (``MaxoutWindowEncoder``: a token and its neighbours, 288 or 192 wide,
into 3 maxout pieces) multiplies by its weights in ONNX Runtime's ``DynamicQuantizeMatMul``: the weights
quantized to int8 once, at load, with a scale per output unit (symmetric, the largest weight at 127), the
inputs to uint8 as they come.  About three times as fast as the float32 product on one thread (AVX-512 VNNI).

The values move by about 1% of their range, so a span can change where a model hesitates: on the 5-fold
development prompts and TAB dev the figures are the float32 ones to a word (docs/detection.md, "Speed").  The
bias, maxout, layer norm and everything after are float32, as are the embedding and the NER's own layers.
Inference only: a swapped layer refuses ``is_train``.  The graph is ``products_int8.onnx``, one node with no
weights, written by ``scripts/make_products_graph.py``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Tuple

import numpy

from .products import ort_session
from .thinc_layers import chain_leaves, inference_only, layer_norm

INT8_GRAPH = Path(__file__).with_name("products_int8.onnx")


def quantize(W: Any) -> Tuple[Any, Any]:
    """``(B, S)`` for ``X @ W.T``: ``B`` int8 (K x N) and ``S`` float32 (N), ``W.T`` about ``B * S``."""
    Wt = numpy.asarray(W, dtype=numpy.float32).T
    scale = numpy.abs(Wt).max(axis=0) / 127.0
    scale[scale == 0] = 1.0
    B = numpy.clip(numpy.rint(Wt / scale), -127, 127).astype(numpy.int8)
    return numpy.ascontiguousarray(B), scale.astype(numpy.float32)


def use_int8_encoders(nlp: Any) -> int:
    """Give every residual window block of ``nlp``'s components an int8 product (the block runs as one function:
    window, product, maxout, layer norm, residual sum); how many blocks."""
    session = ort_session(INT8_GRAPH)
    done, seen = 0, set()
    for _, component in nlp.pipeline:
        model = getattr(component, "model", None)
        if model is None or not hasattr(model, "walk"):
            continue
        for layer in model.walk():
            if id(layer) in seen or not layer.name.startswith("residual(expand_window>>maxout"):
                continue
            seen.add(id(layer))
            parts = chain_leaves(layer.layers[0])
            if [p.name for p in parts] != ["expand_window", "maxout", "layernorm", "dropout"]:
                continue
            window, maxout, norm = parts[:3]
            nO, nP, nI = (maxout.get_dim(d) for d in ("nO", "nP", "nI"))
            B, S = quantize(numpy.asarray(maxout.get_param("W")).reshape(nO * nP, nI))
            bias = numpy.asarray(maxout.get_param("b"), dtype=numpy.float32).reshape(nO * nP)
            layer._func = _block(session, int(window.attrs["window_size"]), B, S, bias, nO, nP,
                                 norm.get_param("G"), norm.get_param("b"))
            done += 1
    return done


def _block(session: Any, window: int, B: Any, S: Any, bias: Any, nO: int, nP: int, G: Any, b: Any) -> Callable:
    """``residual(expand_window >> maxout >> layernorm >> dropout)`` with the product in int8."""

    def forward(model: Any, X: Any, is_train: bool) -> Tuple[Any, Callable]:
        if is_train:
            raise RuntimeError("a pipeline read through int8_encoders cannot be trained: load the model again")
        if not X.shape[0]:
            return X, inference_only
        cols = model.ops.seq2col(numpy.ascontiguousarray(X, dtype=numpy.float32), window)
        Y = session.run(None, {"X": cols, "B": B, "S": S})[0]
        Y += bias
        best, _ = model.ops.maxout(Y.reshape(Y.shape[0], nO, nP))
        return X + layer_norm(best, G, b), inference_only

    return forward
