"""PRISM's completion time and edge energy, from the metered results (``wall_ms``, ``energy``; see energy.py).

Averaged over completed samples, as PRISM's Table 1; a sample without a meter reading is left out.
"""
from __future__ import annotations

import math
import statistics
from typing import Any, List, Optional, Sequence

from .samples import SampleView, unpack


def sample_wall_s(view: SampleView) -> Optional[float]:
    """End-to-end wall time of one completed sample in seconds (None: failed or not metered)."""
    if not view.completed:
        return None
    w = view.field("wall_ms")
    return None if w is None else float(w) / 1e3


def sample_energy_j(view: SampleView) -> Optional[float]:
    """Edge energy of one completed sample in joules (None: failed or not metered)."""
    if not view.completed:
        return None
    e = view.field("energy") or {}
    return None if e.get("joules") is None else float(e["joules"])


def _mean(values: List[Optional[float]]) -> float:
    kept = [v for v in values if v is not None]
    return math.nan if not kept else round(statistics.fmean(kept), 4)


def completion_time_s(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    """Mean end-to-end completion time (s) of completed samples."""
    return _mean([sample_wall_s(v) for v in unpack(y_true, y_pred)])


def edge_energy_j(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    """Mean edge-device energy (J) of completed samples (RAPL or the labelled CPU-time estimate)."""
    return _mean([sample_energy_j(v) for v in unpack(y_true, y_pred)])
