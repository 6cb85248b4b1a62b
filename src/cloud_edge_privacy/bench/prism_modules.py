"""The Ianvs modules of the PRISM example: the library's edge and cloud modules, each request metered.

Sedna calls the edge module (edge route) or the cloud module (cloud and collaborative routes, which run
protection, the cloud call and the edge refinement) once per prompt in ``mining-then-inference`` mode, so
the wall time and the edge energy of the whole request are measured around that call and stored in the
result (``wall_ms``, ``energy``).  No privacy logic here.
"""
from __future__ import annotations

from typing import Any, Dict

from .energy import EnergyMeter
from .ianvs_modules import CloudModule, EdgeModule


def metered(result: Dict[str, Any], meter: EnergyMeter) -> Dict[str, Any]:
    r = meter.reading
    if r is not None and isinstance(result, dict):
        result["wall_ms"] = r.wall_s * 1e3
        result["energy"] = r.to_dict()
    return result


class PrismEdgeModule(EdgeModule):
    """Edge-only answers, metered."""

    def predict(self, data: Any, **kwargs: Any) -> Dict[str, Any]:
        with EnergyMeter() as m:
            res = super().predict(data, **kwargs)
        return metered(res, m)


class PrismCloudModule(CloudModule):
    """Cloud and collaborative routes (protect, guard, audit, call, restore, refine), metered."""

    def inference(self, data: Any, **kwargs: Any) -> Dict[str, Any]:
        with EnergyMeter() as m:
            res = super().inference(data, **kwargs)
        return metered(res, m)
