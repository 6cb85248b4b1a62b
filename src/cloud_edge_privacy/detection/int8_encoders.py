"""The spaCy models' window encoders with int8 products: the largest products a model makes per text.

Each residual block of a model's encoder (``MaxoutWindowEncoder``: a token and its neighbours, 288 or 192 wide,
into 3 maxout pieces, then a layer norm, added to the block's input) runs as one ONNX Runtime call of
``window_block_int8.onnx``: its product in ``DynamicQuantizeMatMul``, the weights quantized to int8 once, at load,
with a scale per output unit (symmetric, the largest weight at 127), the inputs to uint8 as they come.  The product
is about three times as fast as in float32 on one thread (AVX-512 VNNI), and one call instead of thinc's six
layers and numpy's steps saves about as much again.

The values move by about 1% of their range, so a span can change where a model hesitates: on the 5-fold
development prompts and TAB dev the figures are the float32 ones to a word (docs/detection.md, "Speed").  The
embedding and the NER's own layers stay float32.  Inference only: a swapped block refuses ``is_train``.  The graph
has no weights; ``scripts/make_products_graph.py`` writes it.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict, Tuple

import numpy

from .products import ort_session
from .thinc_layers import chain_leaves, inference_only

BLOCK_GRAPH = Path(__file__).with_name("window_block_int8.onnx")


def quantize(W: Any) -> Tuple[Any, Any]:
    """``(B, S)`` for ``X @ W.T``: ``B`` int8 (K x N) and ``S`` float32 (N), ``W.T`` about ``B * S``."""
    Wt = numpy.asarray(W, dtype=numpy.float32).T
    scale = numpy.abs(Wt).max(axis=0) / 127.0
    scale[scale == 0] = 1.0
    B = numpy.clip(numpy.rint(Wt / scale), -127, 127).astype(numpy.int8)
    return numpy.ascontiguousarray(B), scale.astype(numpy.float32)


def use_int8_encoders(nlp: Any) -> int:
    """Run every residual window block (window 1) of ``nlp``'s components through one int8 call; how many."""
    session = ort_session(BLOCK_GRAPH)
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
            if [p.name for p in parts] != ["expand_window", "maxout", "layernorm", "dropout"] \
                    or parts[0].attrs.get("window_size") != 1:
                continue
            maxout, norm = parts[1], parts[2]
            nO, nP, nI = (maxout.get_dim(d) for d in ("nO", "nP", "nI"))
            B, S = quantize(numpy.asarray(maxout.get_param("W")).reshape(nO * nP, nI))
            feeds = {"B": B, "S": S, "c": numpy.asarray(maxout.get_param("b"), dtype=numpy.float32).reshape(nO * nP),
                     "G": numpy.asarray(norm.get_param("G"), dtype=numpy.float32),
                     "b": numpy.asarray(norm.get_param("b"), dtype=numpy.float32),
                     "shape": numpy.array([0, -1, nP], dtype=numpy.int64)}
            layer._func = _block(session, feeds)
            done += 1
    return done


def _block(session: Any, feeds: Dict[str, Any]) -> Callable:
    """``residual(expand_window >> maxout >> layernorm >> dropout)`` as one call of the block graph."""

    def forward(model: Any, X: Any, is_train: bool) -> Tuple[Any, Callable]:
        if is_train:
            raise RuntimeError("a pipeline read through int8_encoders cannot be trained: load the model again")
        if not X.shape[0]:
            return X, inference_only
        return session.run(None, dict(feeds, X=numpy.ascontiguousarray(X, dtype=numpy.float32)))[0], inference_only

    return forward
