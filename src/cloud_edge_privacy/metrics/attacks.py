"""Inference-attack resistance (IAR): attacks run on exactly what was sent, each reported on its own.

Each ``iar_*`` metric is the *success rate* of one attack (lower is more private):

* ``iar_coref_leak``: of the gold entities the gateway hid at least one mention of, the share that
  still has another mention in clear in the sent text.
* ``iar_reidentification`` (**oracle linking, an upper bound, not a realistic attacker**): the attacker
  is handed the gold DIRECT/QUASI surface forms of every document of the run and links each sent text to
  the document whose values it contains most; success when that document is the right one and the best
  match is unique.  No real attacker has the gold annotations; it measures how much annotated identifying
  content survives, against a candidate pool the size of the run.  The realistic attack is TRIR.
* ``iar_trir``: TRIR (:mod:`.trir`), an attacker trained on public background knowledge links each sent
  text to a person among the 1,237 of the background file.
* ``iar_inference``: a local LM sees the sent text with one masked DIRECT mention marked and is asked
  for the original value; success when its guess contains the original (case-insensitive).  At most
  ``MAX_SPANS_PER_SAMPLE`` mentions per sample, to bound the cost (one LLM call each, cached on disk).

``iar`` = 1 - the *largest* success rate among the two cheap deterministic attacks (co-reference leak,
oracle linking): the worst case of the attacks it names, never a blend, and never silently TRIR or the
LM attack (each has its own column).
"""
from __future__ import annotations

import math
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .privacy import appears_in
from .samples import SampleView, gold_mentions, unpack


def coref_parts(view: SampleView) -> Optional[Tuple[float, float]]:
    """(entities still named elsewhere, entities with a hidden mention) for one sample; None if unsent."""
    sent = view.sent_text()
    if not sent:
        return None
    entities: Dict[str, List[Dict[str, Any]]] = {}
    for ms in (view.gold.get("annotations") or {}).values():
        for m in ms:
            if m.get("identifier_type") in ("DIRECT", "QUASI"):
                entities.setdefault(m["entity_id"], []).append(m)
    hidden = leaked = 0
    for ms in entities.values():
        clear = [appears_in(m["span_text"], sent) for m in ms]
        if not all(clear):
            hidden += 1
            leaked += any(clear)
    return float(leaked), float(hidden)


def coref_leak_rate(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    parts = [p for p in (coref_parts(v) for v in unpack(y_true, y_pred)) if p]
    den = sum(p[1] for p in parts)
    return math.nan if den == 0 else round(sum(p[0] for p in parts) / den, 6)


def oracle_linking_hits(y_true: Sequence[Any], y_pred: Sequence[Any]) -> List[Optional[int]]:
    """Per sample 1/0 for the oracle linking attack (see the module doc), None when nothing was sent."""
    views = unpack(y_true, y_pred)
    knowledge = {i: {m["span_text"].strip() for m in gold_mentions(v.gold)} for i, v in enumerate(views)}
    out: List[Optional[int]] = []
    for i, v in enumerate(views):
        sent = v.sent_text()
        if not sent:
            out.append(None)
            continue
        scores = {j: sum(appears_in(s, sent) for s in known) for j, known in knowledge.items()}
        best = max(scores.values())
        winners = [j for j, s in scores.items() if s == best]
        out.append(int(best > 0 and winners == [i]))
    return out


def reidentification_rate(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    """Oracle linking success rate (upper bound; the attacker holds the gold quasi-identifiers)."""
    hits = [h for h in oracle_linking_hits(y_true, y_pred) if h is not None]
    return math.nan if not hits else round(sum(hits) / len(hits), 6)


MAX_SPANS_PER_SAMPLE = 3
ATTACK_PROMPT = ("The text below was anonymized. Guess the original value hidden at <<TARGET>> "
                 "(it replaced: {replacement!r}). Reply with your guess only.\n\n{context}")


def default_lm_attacker() -> Any:
    """The local helper LM (one per process, kept by ``local_helper_model``)."""
    from ..models.llama_edge import local_helper_model

    return local_helper_model(max_tokens=12, seed=11)


def inference_attack_rate(y_true: Sequence[Any], y_pred: Sequence[Any], attacker: Optional[Any] = None) -> float:
    """Share of attacked masked DIRECT mentions whose original value the LM recovers.

    ``attacker`` has ``chat(messages) -> {"answer": str}``; default: the local helper LM."""
    attempts = hits = 0
    for v in unpack(y_true, y_pred):
        sent = v.sent_text()
        masks = v.field("masks") or []
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
            attacker = attacker or default_lm_attacker()
            guess = attacker.chat([{"role": "user", "content": ATTACK_PROMPT.format(
                replacement=replacement, context=context)}])["answer"]
            attempts += 1
            hits += int(target["span_text"].strip().lower() in guess.lower())
    return math.nan if attempts == 0 else round(hits / attempts, 6)


CHEAP_ATTACKS: Tuple[Callable[[Sequence[Any], Sequence[Any]], float], ...] = (coref_leak_rate, reidentification_rate)


def iar(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    """1 - the largest success rate of the cheap attacks (co-reference leak, oracle linking); attacks
    with nothing to attack are skipped; NaN when neither had anything.  TRIR and the LM attack are
    reported on their own (``iar_trir``, ``iar_inference``), never folded in."""
    rates = [r for r in (f(y_true, y_pred) for f in CHEAP_ATTACKS) if not math.isnan(r)]
    return math.nan if not rates else round(1.0 - max(rates), 6)
