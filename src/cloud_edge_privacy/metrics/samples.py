"""Unpack Ianvs/Sedna's ``y_pred`` (a list of 4-lists) and ``y_true`` (gold dicts or JSON strings)."""
from __future__ import annotations

import json
from dataclasses import dataclass, fields
from typing import Any, Dict, List, Optional, Sequence

from ..audit import sent_text
from ..results import Route, SampleResult, Status


def _typed(part: Any) -> Optional[SampleResult]:
    """A module result as :class:`SampleResult` (the Ianvs boundary hands dicts; ``None`` stays ``None``)."""
    if part is None or isinstance(part, SampleResult):
        return part
    if isinstance(part, dict):
        return SampleResult.from_dict(part)
    raise TypeError(f"a sample result must be a dict or SampleResult, not {type(part).__name__}")


@dataclass
class SampleView:
    """One sample of a test case: gold (y) and Sedna's four results, typed."""

    gold: Dict[str, Any]
    is_hard: bool
    result: Optional[SampleResult]
    edge: Optional[SampleResult]
    cloud: Optional[SampleResult]

    def __post_init__(self) -> None:
        self.result, self.edge, self.cloud = _typed(self.result), _typed(self.edge), _typed(self.cloud)

    @property
    def status(self) -> str:
        """``ok`` or the failure status of the sample (the final result's, else the cloud result's)."""
        for part in (self.result, self.cloud):
            if part is not None and part.status != Status.OK:
                return part.status.value
        return Status.OK.value

    @property
    def completed(self) -> bool:
        """The sample produced an answer (status ``ok``); failed samples have none."""
        return self.status == Status.OK

    def sent_messages(self) -> Optional[List[Dict[str, Any]]]:
        """Exactly what left the edge (chat messages), from the final result or else the cloud result;
        None when nothing was sent.  A sample that failed *after* sending (e.g. a cloud error) still
        has its traffic here: leakage is measured on traffic, whatever the status."""
        for part in (self.result, self.cloud):
            if part is not None and part.sent_messages:
                return list(part.sent_messages)
        return None

    def field(self, key: str, default: Any = None) -> Any:
        """A result field (or a key a wrapper added): from the final result when it has it, else from the
        cloud result."""
        for part in (self.result, self.cloud):
            if part is None:
                continue
            value = getattr(part, key) if key in _FIELDS else part.extra.get(key)
            if value is not None:
                return value
        return default

    @property
    def route(self) -> Route:
        """The route that answered (cloud when no result says otherwise)."""
        r = self.field("route")
        return Route(r) if r is not None else Route.CLOUD

    def parts(self) -> List[SampleResult]:
        """The distinct module results of this sample (edge and cloud; the final one is a copy of either)."""
        return [p for p in (self.edge, self.cloud) if p is not None]

    @property
    def in_leakage(self) -> bool:
        """Counted by leakage metrics: completed samples, and failed ones whose traffic left the edge.
        A failed-closed sample sent nothing and answered nothing; it is counted in ``n_failed`` only,
        so failing cannot make a configuration look more private."""
        return self.completed or self.went_to_cloud

    @property
    def went_to_cloud(self) -> bool:
        """Something left the edge for this sample."""
        return self.sent_messages() is not None

    def sent_text(self) -> str:
        """Everything that left the edge for this sample, '' if nothing did (:func:`~..audit.sent_text`,
        the definition the audit-log scan uses too)."""
        return sent_text(self.sent_messages())


_FIELDS = {f.name for f in fields(SampleResult)} - {"extra"}


def _gold(item: Any) -> Dict[str, Any]:
    if isinstance(item, dict):
        return item
    if isinstance(item, (str, bytes)):
        try:
            value = json.loads(item)
        except json.JSONDecodeError:
            return {}
        return value if isinstance(value, dict) else {}
    return {}


def unpack(y_true: Sequence[Any], y_pred: Sequence[Any]) -> List[SampleView]:
    """Align gold and predictions; tolerate ``None`` entries and an empty run."""
    if y_true is None or y_pred is None:
        return []
    n_true, n_pred = len(y_true), len(y_pred)
    if n_true != n_pred:
        raise ValueError(f"y_true has {n_true} samples but y_pred has {n_pred}")
    views = []
    for gold, pred in zip(y_true, y_pred):
        if isinstance(pred, (list, tuple)) and len(pred) == 4:
            hard, res, edge, cloud = pred
        else:  # a bare result (e.g. self-design mode)
            hard, res, edge, cloud = False, pred, pred, None
        views.append(SampleView(_gold(gold), bool(hard), res, edge, cloud))
    return views


def gold_mentions(gold: Dict[str, Any], identifier_types=("DIRECT", "QUASI")) -> List[Dict[str, Any]]:
    """Gold mentions of the given identifier types, from every annotator (deduplicated by offsets)."""
    seen, out = set(), []
    for mentions in (gold.get("annotations") or {}).values():
        for m in mentions:
            key = (m["start_offset"], m["end_offset"])
            if m.get("identifier_type") in identifier_types and key not in seen:
                seen.add(key)
                out.append(m)
    return out
