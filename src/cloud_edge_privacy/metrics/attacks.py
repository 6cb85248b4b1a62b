"""Inference-attack resistance (IAR): attacks run on exactly what was sent, each reported separately.

* co-reference leak: of the gold entities the gateway hid at least one mention of, the share that
  still has another mention in clear in the sent text.
* re-identification: an attacker knows every person's quasi-identifiers (the gold DIRECT/QUASI surface
  forms of each document of the run) and links each sent text to the document whose known values it
  contains most; success when that document is the right one and the best match is unique.

* inference attack: a local LM sees the sent text with one masked DIRECT mention marked and is asked
  for the original value; success when its guess contains the original (case-insensitive).  At most
  ``MAX_SPANS_PER_SAMPLE`` mentions per sample, to bound the cost (one LLM call each, cached on disk).
"""
from __future__ import annotations

import math
from typing import Any, Dict, List, Sequence

from .privacy import appears_in
from .samples import gold_mentions, unpack


def coref_leak_rate(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    hidden_somewhere = leaked = 0
    for v in unpack(y_true, y_pred):
        sent = v.sent_text()
        if not sent:
            continue
        entities: Dict[str, List[Dict[str, Any]]] = {}
        for ms in (v.gold.get("annotations") or {}).values():
            for m in ms:
                if m.get("identifier_type") in ("DIRECT", "QUASI"):
                    entities.setdefault(m["entity_id"], []).append(m)
        for ms in entities.values():
            clear = [appears_in(m["span_text"], sent) for m in ms]
            if not all(clear):
                hidden_somewhere += 1
                leaked += any(clear)
    return math.nan if hidden_somewhere == 0 else round(leaked / hidden_somewhere, 6)


def reidentification_rate(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    views = unpack(y_true, y_pred)
    knowledge = {i: {m["span_text"].strip() for m in gold_mentions(v.gold)} for i, v in enumerate(views)}
    attempts = hits = 0
    for i, v in enumerate(views):
        sent = v.sent_text()
        if not sent:
            continue
        attempts += 1
        scores = {j: sum(appears_in(s, sent) for s in known) for j, known in knowledge.items()}
        best = max(scores.values())
        winners = [j for j, s in scores.items() if s == best]
        hits += int(best > 0 and winners == [i])
    return math.nan if attempts == 0 else round(hits / attempts, 6)


MAX_SPANS_PER_SAMPLE = 3
ATTACK_PROMPT = ("The text below was anonymized. Guess the original value hidden at <<TARGET>> "
                 "(it replaced: {replacement!r}). Reply with your guess only.\n\n{context}")
_attacker = None


def _attacker_model():
    from ..models.llama_edge import local_helper_model

    return _attacker or local_helper_model(max_tokens=12, seed=11)


def inference_attack_rate(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    """Share of attacked masked DIRECT mentions whose original value the local LM recovers."""
    attempts = hits = 0
    for v in unpack(y_true, y_pred):
        sent = v.sent_text()
        masks = (v.cloud or {}).get("masks") or []
        if not sent or not masks:
            continue
        directs = [m for m in gold_mentions(v.gold, ("DIRECT",))]
        done = 0
        for start, end, replacement in masks:
            target = next((m for m in directs if start <= m["start_offset"] and m["end_offset"] <= end), None)
            if target is None or done >= MAX_SPANS_PER_SAMPLE or replacement not in sent:
                continue
            done += 1
            i = sent.index(replacement)
            context = sent[max(0, i - 600):i] + "<<TARGET>>" + sent[i + len(replacement):i + len(replacement) + 300]
            guess = _attacker_model().chat([{"role": "user", "content": ATTACK_PROMPT.format(
                replacement=replacement, context=context)}])["answer"]
            attempts += 1
            hits += int(target["span_text"].strip().lower() in guess.lower())
    return math.nan if attempts == 0 else round(hits / attempts, 6)


def iar(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    """1 - mean success rate of the cheap attacks (co-reference leak, re-identification); attacks with
    nothing to attack are skipped.  The LM inference attack is reported on its own (``iar_inference``)."""
    rates = [r for r in (coref_leak_rate(y_true, y_pred), reidentification_rate(y_true, y_pred)) if not math.isnan(r)]
    return math.nan if not rates else round(1.0 - sum(rates) / len(rates), 6)
