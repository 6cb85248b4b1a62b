"""Ianvs testenv metrics on routing, cost and latency (computed from the results; Ianvs measures no time)."""
from cloud_edge_privacy.metrics import judge, performance
from cloud_edge_privacy.registry import ClassFactory, ClassType

for _name, _fn in {
    "n_completed": performance.n_completed,
    "n_failed": performance.n_failed,
    "edge_ratio": performance.edge_ratio,
    "cloud_tokens": performance.cloud_tokens,
    "latency_mean_ms": performance.latency_mean_ms,
    "privacy_failures": performance.privacy_failures,
    "lo_pct": performance.lo_pct,
    "ti_pct": performance.ti_pct,
    "cache_replays": performance.cache_replays,
    "llm_judge": judge.llm_judge,
}.items():
    ClassFactory.register(ClassType.GENERAL, alias=_name)(_fn)
