"""spaCy's hash embedding with its first product made once, at load: a table lookup per token instead of a product.

A spaCy model's embedding (``MultiHashEmbed``) sums four rows of a table per token and attribute (NORM, PREFIX,
SUFFIX, SHAPE...), puts the attributes side by side and multiplies the result by its maxout layer's weights.  The
product is linear, so each table's rows can be multiplied by their share of the weights once, when the model is
loaded: a token's pre-activation is then the sum of those products' rows, plus the bias.  That was the largest
product a model made per text (384 or 576 wide in, 288 out), a quarter of the embedding and encoder's time.

The maxout, layer norm and everything after run as before; the values are the same to float rounding (the sums
are made in another order), and the spans of the default preset are the same (tests/test_embed_tables.py).  Only
inference runs through the tables (a pipeline that is trained keeps thinc's own forward: :func:`use_embed_tables`
refuses ``is_train``), and a model built otherwise (static vectors, another layout) is left as it is.
"""
from __future__ import annotations

from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy

from .thinc_layers import chain_leaves, inference_only, layer_norm


def use_embed_tables(nlp: Any) -> int:
    """Give every ``MultiHashEmbed`` of ``nlp``'s components a forward through precomputed tables; how many."""
    done = 0
    seen = set()
    for _, component in nlp.pipeline:
        model = getattr(component, "model", None)
        if model is None or not hasattr(model, "walk"):
            continue
        for layer in model.walk():
            if id(layer) in seen:
                continue
            seen.add(id(layer))
            plan = _plan(layer)
            if plan is not None:
                layer._func = _forward(*plan)
                done += 1
    return done


def _plan(layer: Any) -> Optional[Tuple[Any, List[Tuple[int, int, Any]], Any, int, int, Any]]:
    """(feature extractor, [(column, seed, table)], bias, nO, nP, layer norm) where ``layer`` is spaCy's
    ``extract_features >> list2ragged >> with_array(concatenate(hashembeds)) >> with_array(maxout >> layernorm
    >> dropout) >> ragged2list``; None for any other layer."""
    parts = chain_leaves(layer)
    names = [p.name for p in parts]
    if len(parts) != 5 or names[0] != "extract_features" or names[1] != "list2ragged" or names[4] != "ragged2list":
        return None
    concat, head = parts[2].layers, parts[3].layers
    if len(concat) != 1 or concat[0].name.split("|")[0] != "ints-getitem>>hashembed" or len(head) != 1:
        return None
    embeds = [chain_leaves(c) for c in concat[0].layers]
    head_parts = chain_leaves(head[0])
    if not embeds or any(len(e) != 2 or e[1].name != "hashembed" for e in embeds) \
            or [p.name for p in head_parts] != ["maxout", "layernorm", "dropout"]:
        return None
    maxout, norm = head_parts[0], head_parts[1]
    nO, nP, nI = (maxout.get_dim(d) for d in ("nO", "nP", "nI"))
    W = numpy.asarray(maxout.get_param("W"), dtype=numpy.float32).reshape(nO * nP, nI)
    tables, start = [], 0
    for _, embed in embeds:
        E = numpy.asarray(embed.get_param("E"), dtype=numpy.float32)
        width = E.shape[1]
        tables.append((int(embed.attrs["column"]), int(embed.attrs["seed"]),
                       numpy.ascontiguousarray(E @ W[:, start:start + width].T)))
        start += width
    if start != nI:
        return None
    bias = numpy.asarray(maxout.get_param("b"), dtype=numpy.float32).reshape(nO * nP)
    return parts[0], tables, bias, nO, nP, norm


def _forward(features: Any, tables: Sequence[Tuple[int, int, Any]], bias: Any, nO: int, nP: int,
             norm: Any) -> Callable:
    def forward(model: Any, docs: Sequence[Any], is_train: bool) -> Tuple[List[Any], Callable]:
        if is_train:
            raise RuntimeError("a pipeline read through embed_tables cannot be trained: load the model again")
        ops = model.ops
        ids = features.predict(docs)
        lengths = [len(x) for x in ids]
        if not sum(lengths):
            return [ops.alloc2f(0, nO) for _ in docs], inference_only
        rows = ops.xp.concatenate(ids)
        Y = numpy.empty((rows.shape[0], nO * nP), dtype=numpy.float32)
        Y[...] = bias
        for column, seed, table in tables:
            column_ids = ops.as_contig(rows[:, column], dtype="uint64")
            Y += ops.gather_add(table, ops.hash(column_ids, seed) % table.shape[0])
        best, _ = ops.maxout(Y.reshape(Y.shape[0], nO, nP))
        out = layer_norm(best, norm.get_param("G"), norm.get_param("b"))
        return list(numpy.split(out, numpy.cumsum(lengths)[:-1])), inference_only

    return forward
