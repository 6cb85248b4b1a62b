"""The spaCy models' window encoders with int8 products: the largest products a model makes per text.

A model's encoder (``MaxoutWindowEncoder``: 3 or 4 residual blocks, each a token and its neighbours, 288 or 192
wide, into 3 maxout pieces, then a layer norm, added to the block's input) runs as one ONNX Runtime call of
``window_encoder_int8_d{depth}.onnx``: each product in ``DynamicQuantizeMatMul``, the weights quantized to int8
once, at load, with a scale per output unit (symmetric, the largest weight at 127), the inputs to uint8 as they
come.  The product is about three times as fast as in float32 on one thread (AVX-512 VNNI), and one call instead
of thinc's layers and numpy's steps around each product saves about as much again.

The values move by about 1% of their range, so a span can change where a model hesitates (10 of the 238
development and TAB dev texts); the 5-fold figures and TAB dev's are the float32 ones, with 2 more words kept
(docs/detection.md, "Speed").  The embedding and the NER's own layers stay float32.  Inference only: a swapped
encoder refuses ``is_train``.  The graphs, one per depth, have no weights; ``scripts/make_products_graph.py`` writes
them.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy

from .products import ort_session
from .thinc_layers import chain_leaves, inference_only

GRAPHS = Path(__file__).parent  # window_encoder_int8_d{depth}.onnx


def quantize(W: Any) -> Tuple[Any, Any]:
    """``(B, S)`` for ``X @ W.T``: ``B`` int8 (K x N) and ``S`` float32 (N), ``W.T`` about ``B * S``."""
    Wt = numpy.asarray(W, dtype=numpy.float32).T
    scale = numpy.abs(Wt).max(axis=0) / 127.0
    scale[scale == 0] = 1.0
    B = numpy.clip(numpy.rint(Wt / scale), -127, 127).astype(numpy.int8)
    return numpy.ascontiguousarray(B), scale.astype(numpy.float32)


def use_int8_encoders(nlp: Any) -> int:
    """Run each window encoder of ``nlp``'s components (its residual blocks, window 1) as one int8 call, or block
    by block where no graph has its depth; how many blocks."""
    done, seen = 0, set()
    for _, component in nlp.pipeline:
        model = getattr(component, "model", None)
        if model is None or not hasattr(model, "walk"):
            continue
        for layer in model.walk():
            if id(layer) in seen or layer._func.__module__ != "thinc.layers.chain":
                continue
            blocks = [_block_feeds(b) for b in layer.layers]
            if not blocks or any(b is None for b in blocks):
                continue
            seen.update(id(sub) for sub in layer.walk())
            graph = _graph(len(blocks))
            if graph.is_file():
                layer._func = _encoder(ort_session(graph), blocks)
            else:
                session = ort_session(_graph(1))
                for block, feeds in zip(layer.layers, blocks):
                    block._func = _encoder(session, [feeds])
            done += len(blocks)
    return done


def _graph(depth: int) -> Path:
    return GRAPHS / f"window_encoder_int8_d{depth}.onnx"


def _block_feeds(block: Any) -> Optional[Dict[str, Any]]:
    """The inputs of one ``residual(expand_window >> maxout >> layernorm >> dropout)`` block (window 1), its
    weights quantized; None for any other layer."""
    if not block.name.startswith("residual(expand_window>>maxout") or len(block.layers) != 1:
        return None
    parts = chain_leaves(block.layers[0])
    if [p.name for p in parts] != ["expand_window", "maxout", "layernorm", "dropout"] \
            or parts[0].attrs.get("window_size") != 1:
        return None
    maxout, norm = parts[1], parts[2]
    nO, nP, nI = (maxout.get_dim(d) for d in ("nO", "nP", "nI"))
    B, S = quantize(numpy.asarray(maxout.get_param("W")).reshape(nO * nP, nI))
    return {"B": B, "S": S, "c": numpy.asarray(maxout.get_param("b"), dtype=numpy.float32).reshape(nO * nP),
            "G": numpy.asarray(norm.get_param("G"), dtype=numpy.float32),
            "b": numpy.asarray(norm.get_param("b"), dtype=numpy.float32), "pieces": nP}


def _encoder(session: Any, blocks: List[Dict[str, Any]]) -> Callable:
    """A chain of ``blocks`` (or one block) as one call of the encoder graph of their depth."""
    feeds = {f"{name}{k}": block[name] for k, block in enumerate(blocks) for name in ("B", "S", "c", "G", "b")}
    feeds["shape"] = numpy.array([0, -1, blocks[0]["pieces"]], dtype=numpy.int64)
    if any(block["pieces"] != blocks[0]["pieces"] for block in blocks):
        raise ValueError("the blocks of a window encoder differ in maxout pieces")

    def forward(model: Any, X: Any, is_train: bool) -> Tuple[Any, Callable]:
        if is_train:
            raise RuntimeError("a pipeline read through int8_encoders cannot be trained: load the model again")
        if not X.shape[0]:
            return X, inference_only
        return session.run(None, dict(feeds, X=numpy.ascontiguousarray(X, dtype=numpy.float32)))[0], inference_only

    return forward
