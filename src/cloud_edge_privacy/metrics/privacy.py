"""Leakage metrics on what was actually sent to the cloud (docs/design.md "Metrics").

Samples counted (``SampleView.in_leakage``): completed samples (edge-answered ones leak nothing) and
failed samples whose traffic left the edge.  Failed-closed samples are left out and reported by
``n_failed``.  PDR and SELS pool mentions over the counted samples (a ratio of sums); their
bootstrap intervals resample documents (see :mod:`cloud_edge_privacy.metrics.stats`).
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..audit import sent_text
from ..spans import surface_pattern
from .samples import SampleView, gold_mentions, unpack


def mention_sensitivity(m: Dict[str, Any]) -> int:
    """s(m): 5 for DIRECT, 3 for QUASI, +1 when confidential, capped at 5."""
    s = 5 if m.get("identifier_type") == "DIRECT" else 3
    if m.get("confidential_status", "NOT_CONFIDENTIAL") not in ("NOT_CONFIDENTIAL", "", None):
        s += 1
    return min(s, 5)


def appears_in(surface: str, sent: str) -> bool:
    """Verbatim occurrence of a surface form in sent text, on word boundaries, whitespace-tolerant."""
    surface = surface.strip()
    if not surface or not sent:
        return False
    return surface_pattern(surface).search(sent) is not None


def leaked_mentions(view: SampleView, identifier_types=("DIRECT", "QUASI")) -> List[Dict[str, Any]]:
    sent = view.sent_text()
    if not sent:
        return []
    return [m for m in gold_mentions(view.gold, identifier_types) if appears_in(m["span_text"], sent)]


def pdr_parts(view: SampleView) -> Optional[Tuple[float, float]]:
    """(protected mentions, gold mentions) of one sample, None when the sample is not counted."""
    if not view.in_leakage:
        return None
    total = len(gold_mentions(view.gold))
    return float(total - len(leaked_mentions(view))), float(total)


def sels_parts(view: SampleView) -> Optional[Tuple[float, float]]:
    """(sum s(m) over leaked mentions, sum s(m) over gold mentions) of one sample, or None."""
    if not view.in_leakage:
        return None
    return (float(sum(mention_sensitivity(m) for m in leaked_mentions(view))),
            float(sum(mention_sensitivity(m) for m in gold_mentions(view.gold))))


def leak_direct_count(view: SampleView) -> int:
    """Gold DIRECT mentions found verbatim in this sample's traffic (any status)."""
    return len(leaked_mentions(view, ("DIRECT",)))


def _ratio(parts: List[Optional[Tuple[float, float]]], empty: float) -> float:
    num = sum(p[0] for p in parts if p)
    den = sum(p[1] for p in parts if p)
    return empty if den == 0 else round(num / den, 6)


def pdr(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    """Share of gold DIRECT/QUASI mentions whose surface form does not appear in the sent text."""
    return _ratio([pdr_parts(v) for v in unpack(y_true, y_pred)], 1.0)


def sels(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    """Sensitivity-weighted leakage: sum s(m) over leaked mentions / sum s(m) over all. Lower is better."""
    return _ratio([sels_parts(v) for v in unpack(y_true, y_pred)], 0.0)


def leak_direct(y_true: Sequence[Any], y_pred: Sequence[Any]) -> int:
    """Leak audit: number of gold DIRECT mentions found verbatim in cloud traffic (must be 0).

    Counts every sample whose traffic left the edge, whatever its status."""
    return sum(leak_direct_count(v) for v in unpack(y_true, y_pred))


def leak_audit_lines(lines: Sequence[Dict[str, Any]], gold_by_doc: Dict[str, Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Scan audit-log lines (the messages of each request, recorded before it left) for gold DIRECT
    identifiers with the same definition of "what was sent" as :func:`leak_direct`; returns the findings."""
    findings = []
    for line in lines:
        sent = sent_text(line.get("messages"))
        gold = gold_by_doc.get(line.get("sample_id"), {})
        for m in gold_mentions(gold, ("DIRECT",)):
            if appears_in(m["span_text"], sent):
                findings.append({"sample_id": line.get("sample_id"), "privacy_method": line.get("privacy_method"),
                                 "span_text": m["span_text"], "entity_type": m.get("entity_type")})
    return findings
