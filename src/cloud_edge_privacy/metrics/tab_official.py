"""TAB's own evaluation (Pilán et al. 2022): entity recall on direct/quasi identifiers, token recall
and (uniformly weighted) token precision, with the definitions of TAB's reference evaluator:

* Entities are grouped by ``entity_id`` per annotator. An entity *needs masking* when any of its
  mentions is DIRECT or QUASI; it is *direct* when its first mention is DIRECT.
* A **mention is masked** when every character of it is covered by a mask, ignoring characters of
  titles (Mr, Mrs, Ms), short function words (the, of, in, ...), possessive 's and punctuation.
* **ER_di** / **ER_qi**: share of direct / non-direct entities needing masking whose mentions that need
  masking are all masked; counts pooled over documents and annotators (micro-average).
* **Token recall**: the ``\\w+`` tokens of every mention of entities needing masking; share masked.
* **Token precision**: every ``\\w+`` token inside a system mask scores, per annotator of the document,
  1 if that annotator has a mention needing masking that covers the token: sum / (tokens x annotators).
"""
from __future__ import annotations

import math
import re
from collections import defaultdict
from typing import Any, Dict, Iterable, List, Mapping, Sequence, Tuple

from .samples import unpack

_WORD = re.compile(r"\w+")
MASKED_TYPES = ("DIRECT", "QUASI")
# Characters that may stay uncovered inside a masked mention: they carry no identifying content and
# annotators disagree on whether spans include them.
_IGNORABLE_WORDS = ("mr", "mrs", "ms", "and", "or", "from", "until", "to", "about", "after", "as", "at", "before",
                    "between", "by", "during", "for", "in", "into", "of", "on", "over", "since", "with", "the",
                    "a", "an", "no", "nr", "’s", "'s")
_IGNORABLE = re.compile("|".join([r"\b" + re.escape(w) + r"\b" for w in _IGNORABLE_WORDS]
                                 + [re.escape(c) for c in ",.-;:/&()[]–'\" ’“”"]), re.IGNORECASE)


def _masked_offsets(masks: Sequence[Sequence[Any]], length: int) -> List[bool]:
    cov = [False] * length
    for m in masks:
        for i in range(max(0, int(m[0])), min(length, int(m[1]))):
            cov[i] = True
    return cov


def mention_is_masked(text: str, cov: List[bool], start: int, end: int) -> bool:
    uncovered = {i for i in range(start, end) if not cov[i]}
    if uncovered:
        for m in _IGNORABLE.finditer(text[start:end].lower()):
            uncovered.difference_update(range(start + m.start(), start + m.end()))
    return not uncovered


def _entities(mentions: Iterable[Mapping[str, Any]]) -> List[Dict[str, Any]]:
    ents: Dict[str, Dict[str, Any]] = {}
    for m in mentions:
        need = m["identifier_type"] in MASKED_TYPES
        e = ents.get(m["entity_id"])
        if e is None:
            ents[m["entity_id"]] = {"direct": m["identifier_type"] == "DIRECT", "spans": [(m["start_offset"], m["end_offset"])],
                                    "need": [need]}
        else:
            e["spans"].append((m["start_offset"], m["end_offset"]))
            e["need"].append(need)
    return list(ents.values())


def score_document(gold: Mapping[str, Any], masks: Sequence[Sequence[Any]]) -> Dict[str, int]:
    """Raw counts for one document; combine with :func:`combine`."""
    text = gold["text"]
    cov = _masked_offsets(masks, len(text))
    c: Dict[str, float] = defaultdict(int)
    annotated = gold.get("annotations") or {}
    covering: List[Tuple[int, int, str]] = []  # spans needing masking, per annotator (for precision)
    for annotator, mentions in annotated.items():
        for e in _entities(mentions):
            if not any(e["need"]):
                continue
            kind = "di" if e["direct"] else "qi"
            c[f"entities_{kind}"] += 1
            c[f"entities_{kind}_masked"] += int(all(mention_is_masked(text, cov, s, t)
                                                    for (s, t), need in zip(e["spans"], e["need"]) if need))
            for (s, t), need in zip(e["spans"], e["need"]):
                for tok in _WORD.finditer(text, s, t):
                    c["gold_tokens"] += 1
                    c["gold_tokens_masked"] += int(mention_is_masked(text, cov, tok.start(), tok.end()))
                if need:
                    covering.append((s, t, annotator))
    n_annotators = len(annotated)
    for m in masks:
        for tok in _WORD.finditer(text, int(m[0]), int(m[1])):
            agreeing = {a for s, t, a in covering if s <= tok.start() and tok.end() <= t}
            c["masked_tokens"] += 1
            c["precision_den"] += n_annotators
            c["precision_num"] += len(agreeing)
    return dict(c)


def combine(counts: Iterable[Mapping[str, float]]) -> Dict[str, float]:
    tot: Dict[str, float] = defaultdict(int)
    n = 0
    for c in counts:
        n += 1
        for k, v in c.items():
            tot[k] += v
    ratio = lambda a, b: round(tot[a] / tot[b], 6) if tot[b] else math.nan  # noqa: E731
    return {
        "ER_di": ratio("entities_di_masked", "entities_di"),
        "ER_qi": ratio("entities_qi_masked", "entities_qi"),
        "token_recall": ratio("gold_tokens_masked", "gold_tokens"),
        "token_precision": ratio("precision_num", "precision_den"),
        "n_docs": n,
        "n_entities_di": int(tot["entities_di"]), "n_entities_qi": int(tot["entities_qi"]),
        "n_masked_tokens": int(tot["masked_tokens"]),
    }


def score_masks(golds: Mapping[str, Mapping[str, Any]], masks_by_doc: Mapping[str, Sequence[Sequence[Any]]]) -> Dict[str, float]:
    """Score ``{doc_id: [[start, end, replacement], ...]}`` against gold documents (same doc_ids)."""
    missing = [d for d in masks_by_doc if d not in golds]
    if missing:
        raise KeyError(f"masks for unknown doc_ids: {missing[:5]}")
    return combine(score_document(golds[d], masks_by_doc.get(d, [])) for d in golds)


def _protected_views(y_true, y_pred) -> List[Tuple[Mapping[str, Any], Sequence]]:
    """Samples that went through the privacy gateway (sent to the cloud), with their masks."""
    return [(v.gold, v.field("masks") or []) for v in unpack(y_true, y_pred)
            if v.went_to_cloud and v.gold.get("text")]


def _metric(name: str):
    def f(y_true, y_pred) -> float:
        pairs = _protected_views(y_true, y_pred)
        if not pairs:
            return math.nan
        return combine(score_document(g, m) for g, m in pairs)[name]

    f.__name__ = name.lower()
    f.__doc__ = f"TAB {name} over the samples the gateway protected (NaN when none went to the cloud)."
    return f


er_di = _metric("ER_di")
er_qi = _metric("ER_qi")
token_recall = _metric("token_recall")
token_precision = _metric("token_precision")
