"""spaCy's greedy NER decoder, with the products of every state that has no entity open made in one batch.

spaCy's entity recognizer reads a text one token at a time: at each step it sums three precomputed feature rows
(the next token, the open entity's first token and the token before the next), takes their maxout and multiplies
by the output layer, then takes the best action the BILUO rules allow.  Compiled into spaCy, each step's product
goes through thinc's bundled BLIS, whose generic kernel (see :mod:`.products`) makes a step cost about 39 us:
3 ms of a model's 5-6 ms on a prompt.

With no entity open, a state's features depend on the position alone, so the scores of every such state are one
product over the whole text, and the rules' choice there is a masked arg-max per token.  Inside an entity the
state also depends on where the entity began; those few steps are made one by one, and only the two actions the
rules then allow (continue or close the same label) are scored.  The rules are spaCy's (``ner.pyx``): no entity
begins on whitespace, on the last token or before a sentence start, none continues across one; ties go to the
lower action index, as in spaCy.  The spans are the same as spaCy's to float rounding (the output products sum in
another order); tests/test_greedy_ner.py compares them on the development prompts and on texts with whitespace
and sentence starts.

A component this decoder does not cover (a beam, unseen classes, unknown actions, entities already set on the
text) runs spaCy's own decoder.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

import numpy
from spacy.attrs import IS_SPACE, SENT_START
from spacy.tokens import Doc, Span

_KINDS = ("B", "I", "L", "U")


@dataclass(frozen=True)
class _Actions:
    """An NER component's action table: column indices of each kind, by label for "I" and "L"."""

    labels: Tuple[str, ...]  # per column: the label ("" for O and the blocked unit)
    begin: numpy.ndarray  # boolean column masks
    unit: numpy.ndarray
    out: int
    inside: dict  # label -> column
    last: dict


def _actions(ner: Any) -> Optional[_Actions]:
    """The component's actions, or None where one is not a labelled B/I/L/U, the blocked unit or O, or a label that
    begins has no I or L."""
    names = [ner.moves.get_class_name(i) for i in range(ner.moves.n_moves)]
    n = len(names)
    begin, unit = numpy.zeros(n, bool), numpy.zeros(n, bool)
    inside, last, labels, out = {}, {}, [], -1
    for column, name in enumerate(names):
        kind, _, label = name.partition("-")
        labels.append(label)
        if name == "O":
            out = column
        elif name == "U-":
            continue  # a blocked unit: only where entities are preset
        elif kind not in _KINDS or not label:
            return None
        elif kind == "B":
            begin[column] = True
        elif kind == "U":
            unit[column] = True
        else:
            (inside if kind == "I" else last)[label] = column
    opened = {labels[c] for c in numpy.flatnonzero(begin)}
    if out < 0 or not opened <= inside.keys() & last.keys():
        return None  # no O, or an entity that could begin and never continue or close
    return _Actions(tuple(labels), begin, unit, out, inside, last)


def _closed_choice(acts: _Actions, scores: numpy.ndarray, space: numpy.ndarray, next_starts: numpy.ndarray) -> List[int]:
    """The best action at each token with no entity open: O always; a unit not on whitespace; a beginning also not
    on the last token or before a sentence start.  The first of equal scores, as spaCy."""
    can_begin = ~space & ~next_starts
    can_begin[-1] = False
    allowed = numpy.zeros(scores.shape, bool)
    allowed[:, acts.out] = True
    allowed[~space] |= acts.unit
    allowed[can_begin] |= acts.begin
    return numpy.where(allowed, scores, -numpy.inf).argmax(axis=1).tolist()


class GreedyNer:
    """Decode ``ner`` (a spaCy ``EntityRecognizer``) over docs; :meth:`covers` says whether it can."""

    def __init__(self, ner: Any) -> None:
        self.ner = ner
        model = ner.model
        self._actions = None
        if ner.cfg.get("beam_width", 1) == 1 and model.attrs.get("has_upper") \
                and not model.attrs.get("unseen_classes") and len(model.layers) == 3:
            self._actions = _actions(ner)

    @property
    def covers(self) -> bool:
        return self._actions is not None

    def __call__(self, docs: Sequence[Doc]) -> List[Doc]:
        """``docs`` with their entities set, as ``ner.pipe`` would set them."""
        docs = list(docs)
        # spaCy calls an empty doc annotated; it has nothing preset
        if self._actions is None or any(len(doc) and doc.has_annotation("ENT_IOB") for doc in docs):
            return self._by_spacy(docs)
        if not any(len(doc) for doc in docs):
            return docs
        tok2vec, lower, upper = self.ner.model.layers
        cached, _ = lower(tok2vec.predict(docs), False)  # (tokens + 1, features, hidden, pieces); row 0 pads
        weights, bias = upper.get_param("W"), upper.get_param("b")
        offset = 1
        for doc in docs:
            if len(doc):
                self._decode(doc, cached, offset, lower.get_param("b"), weights, bias)
            offset += len(doc)
        return docs

    def _by_spacy(self, docs: List[Doc]) -> List[Doc]:
        return list(self.ner.pipe(docs))

    def _decode(self, doc: Doc, cached: numpy.ndarray, offset: int, hidden_bias: numpy.ndarray,
                weights: numpy.ndarray, bias: numpy.ndarray) -> None:
        acts = self._actions
        n = len(doc)
        rows = cached[offset:offset + n]
        # no entity open: features (this token, padding, padding)
        closed = (rows[:, 0] + cached[0, 1] + cached[0, 2] + hidden_bias).max(axis=-1)
        scores = self.ner.model.ops.gemm(numpy.ascontiguousarray(closed), weights, trans2=True) + bias
        marks = doc.to_array([IS_SPACE, SENT_START])
        space = marks[:, 0].astype(bool)
        next_starts = numpy.zeros(n, bool)
        next_starts[:-1] = marks[1:, 1] == 1
        choice = _closed_choice(acts, scores, space, next_starts)
        ents: List[Span] = []
        i = 0
        while i < n:
            column = choice[i]
            label = acts.labels[column]
            if column == acts.out:
                i += 1
            elif acts.unit[column]:
                ents.append(Span(doc, i, i + 1, label=label))
                i += 1
            else:
                start, i = i, i + 1
                i = self._inside(start, i, label, n, next_starts, cached, offset, hidden_bias, weights, bias)
                ents.append(Span(doc, start, i, label=label))
        doc.set_ents(ents, default="outside")

    def _inside(self, start: int, i: int, label: str, n: int, next_starts: numpy.ndarray, cached: numpy.ndarray,
                offset: int, hidden_bias: numpy.ndarray, weights: numpy.ndarray, bias: numpy.ndarray) -> int:
        """Steps through an entity of ``label`` opened at ``start``; returns the token after its last."""
        acts = self._actions
        cont, close = acts.inside[label], acts.last[label]
        pair = numpy.ascontiguousarray(weights[[cont, close]])
        pair_bias = bias[[cont, close]]
        first = cached[offset + start, 1]
        while True:
            if i >= n - 1 or next_starts[i]:
                return i + 1  # only closing is allowed
            # features (this token, the entity's first token, the token before this one)
            hidden = (cached[offset + i, 0] + first + cached[offset + i - 1, 2] + hidden_bias).max(axis=-1)
            s_cont, s_close = (pair @ hidden + pair_bias).tolist()
            if s_close > s_cont or (s_close == s_cont and close < cont):
                return i + 1
            i += 1
