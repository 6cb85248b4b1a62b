"""What the inference forwards of :mod:`.embed_tables` and :mod:`.int8_encoders` share: a thinc chain's layers
in order, the backprop they refuse, and thinc's layer norm made with fewer temporaries (the same values)."""
from __future__ import annotations

from typing import Any, List

import numpy


def chain_leaves(layer: Any) -> List[Any]:
    """The layers a (nested) ``chain`` runs in order; ``[layer]`` for any other layer."""
    if layer._func.__module__ != "thinc.layers.chain":
        return [layer]
    return [leaf for child in layer.layers for leaf in chain_leaves(child)]


def inference_only(_: Any) -> Any:
    """The backprop of a layer forward swapped for inference: there is none."""
    raise RuntimeError("a layer swapped for inference has no backprop: load the model again to train it")


def layer_norm(X: Any, G: Any, b: Any) -> Any:
    """thinc's ``LayerNorm`` forward on float32 rows, with numpy's own steps for the mean and variance (the same
    values, bit for bit, tests/test_int8_encoders.py) and two temporaries fewer: about 23 instead of 35 us."""
    n = numpy.intp(X.shape[1])  # numpy divides by its count of items, an intp
    mu = numpy.add.reduce(X, axis=1, keepdims=True)
    numpy.true_divide(mu, n, out=mu, casting="unsafe")
    d = X - mu
    var = numpy.add.reduce(d * d, axis=1, keepdims=True)
    numpy.true_divide(var, n, out=var, casting="unsafe")
    var += 1e-08
    d *= var ** (-1.0 / 2.0)
    d *= G
    d += b
    return d
