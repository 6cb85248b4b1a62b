"""The spaCy models' layer products, run by ONNX Runtime instead of thinc's bundled BLIS.

thinc multiplies through the BLIS wheel it pins, and that wheel has no kernels for CPUs newer than its
configurations (AMD Zen 3 and later, the machines this project is measured on): it picks its generic, unoptimised
kernel.  There one NER layer's product on a prompt (82 tokens, 288 x 288) takes about 410 us; ONNX Runtime's
kernels on one thread take about 145 us, numpy's OpenBLAS about 175 us on one thread.  numpy's OpenBLAS would also
start threads of its own, set for the whole process, which fight the detector's worker thread for the cores; an
ONNX Runtime session's threads are its own (one here).

Only the layers' forward products change (``gemm(x, w, trans2=True)``: every dense layer of the NER models that
:mod:`.embed_tables` and :mod:`.int8_encoders` leave, such as the NER's hidden and output layers); the transition
decoder's own small products, compiled into spaCy, are made in one batch by :mod:`.greedy_ner` instead.  The same
products to float rounding: the spans of the default preset on the development prompts and TAB dev are the same
(tests/test_products.py checks a sample against spaCy as installed).  The graph is ``products.onnx``, a single
``Gemm`` node with no weights, written by ``scripts/make_products_graph.py``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy
from thinc.api import NumpyOps

GRAPH = Path(__file__).with_name("products.onnx")


class OrtProducts(NumpyOps):
    """thinc's CPU ops whose forward products (``x @ w.T`` of float32 matrices) run in a single-threaded ONNX
    Runtime session; every other product and operation is thinc's own."""

    def __init__(self) -> None:
        super().__init__()
        self._session = ort_session(GRAPH)

    def __reduce__(self) -> tuple:
        return (OrtProducts, ())  # a new session where it is unpickled (a session cannot be pickled)

    def gemm(self, x: Any, y: Any, *, out: Any = None, trans1: bool = False, trans2: bool = False) -> Any:
        if not (trans2 and not trans1 and x.ndim == 2 and y.ndim == 2 and x.shape[0] and y.shape[0]
                and x.dtype == numpy.float32 and y.dtype == numpy.float32):
            return super().gemm(x, y, out=out, trans1=trans1, trans2=trans2)
        product = self._session.run(None, {"X": numpy.ascontiguousarray(x), "W": numpy.ascontiguousarray(y)})[0]
        if out is None:
            return product
        out[...] = product
        return out


def ort_session(graph: Path) -> Any:
    """A single-threaded ONNX Runtime session of ``graph`` on the CPU."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(str(graph), opts, providers=["CPUExecutionProvider"])


def use_ort_products(nlp: Any) -> None:
    """Every layer of ``nlp``'s trainable components multiplies through one :class:`OrtProducts`."""
    ops = OrtProducts()
    for _, component in nlp.pipeline:
        model = getattr(component, "model", None)
        if model is not None and hasattr(model, "walk"):
            for layer in model.walk():
                layer.ops = ops
