"""TAB's own evaluation (Pilán et al. 2022): entity recall on direct/quasi identifiers, token recall/precision.

Definitions implemented here (uniform token weights):

* A **mention is masked** when every word character of it lies inside some mask.
* **ER_di**: over entities (per annotator) having a DIRECT mention, the share whose DIRECT and QUASI
  mentions are *all* masked; **ER_qi** likewise over entities whose mentions are QUASI (none DIRECT).
  Counts are pooled over annotators and documents (micro-average).
* **Token recall**: share of word tokens inside gold DIRECT/QUASI mentions that are masked, pooled
  over annotators.
* **Token precision**: share of masked word tokens that at least one annotator marked DIRECT/QUASI.
"""
from __future__ import annotations

import math
import re
from collections import defaultdict
from typing import Any, Dict, Iterable, List, Mapping, Sequence, Tuple

from .samples import unpack

_WORD = re.compile(r"\w+")
MASKED_TYPES = ("DIRECT", "QUASI")


def _covered(masks: Sequence[Sequence[Any]], length: int) -> List[bool]:
    cov = [False] * length
    for m in masks:
        start, end = max(0, int(m[0])), min(length, int(m[1]))
        for i in range(start, end):
            cov[i] = True
    return cov


def _chars_masked(text: str, cov: List[bool], start: int, end: int) -> bool:
    idx = [i for i in range(start, end) if text[i].isalnum() or text[i] == "_"]
    return bool(idx) and all(cov[i] for i in idx)


def score_document(gold: Mapping[str, Any], masks: Sequence[Sequence[Any]]) -> Dict[str, int]:
    """Raw counts for one document; combine with :func:`combine`."""
    text = gold["text"]
    cov = _covered(masks, len(text))
    c = defaultdict(int)
    gold_token_spans = set()
    for mentions in (gold.get("annotations") or {}).values():
        entities: Dict[str, List[Mapping[str, Any]]] = defaultdict(list)
        for m in mentions:
            if m["identifier_type"] in MASKED_TYPES:
                entities[m["entity_id"]].append(m)
                for t in _WORD.finditer(text, m["start_offset"], m["end_offset"]):
                    gold_token_spans.add((t.start(), t.end()))
                    c["gold_tokens"] += 1
                    c["gold_tokens_masked"] += int(all(cov[t.start() : t.end()]))
        for ms in entities.values():
            kind = "di" if any(m["identifier_type"] == "DIRECT" for m in ms) else "qi"
            c[f"entities_{kind}"] += 1
            c[f"entities_{kind}_masked"] += int(all(_chars_masked(text, cov, m["start_offset"], m["end_offset"]) for m in ms))
    for t in _WORD.finditer(text):
        if any(cov[t.start() : t.end()]):
            c["masked_tokens"] += 1
            c["masked_tokens_correct"] += int((t.start(), t.end()) in gold_token_spans)
    return dict(c)


def combine(counts: Iterable[Mapping[str, int]]) -> Dict[str, float]:
    tot: Dict[str, int] = defaultdict(int)
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
        "token_precision": ratio("masked_tokens_correct", "masked_tokens"),
        "n_docs": n,
        "n_entities_di": tot["entities_di"], "n_entities_qi": tot["entities_qi"],
        "n_masked_tokens": tot["masked_tokens"],
    }


def score_masks(golds: Mapping[str, Mapping[str, Any]], masks_by_doc: Mapping[str, Sequence[Sequence[Any]]]) -> Dict[str, float]:
    """Score ``{doc_id: [[start, end, replacement], ...]}`` against gold documents (same doc_ids)."""
    missing = [d for d in masks_by_doc if d not in golds]
    if missing:
        raise KeyError(f"masks for unknown doc_ids: {missing[:5]}")
    return combine(score_document(golds[d], masks_by_doc.get(d, [])) for d in golds)


def _protected_views(y_true, y_pred) -> List[Tuple[Mapping[str, Any], Sequence]]:
    """Samples that went through the privacy gateway (sent to the cloud), with their masks."""
    return [(v.gold, v.cloud.get("masks") or []) for v in unpack(y_true, y_pred)
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
