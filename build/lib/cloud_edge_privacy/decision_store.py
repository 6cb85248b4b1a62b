"""Per-sample store through which the router's decision reaches the cloud module.

Sedna hands the cloud module the raw sample (ianvs-contract.md §4), so the decision travels keyed by
a stable hash of the sample.  A missing decision is not trusted: the cloud module then applies its
own configured protection.
"""
from __future__ import annotations

import threading
from typing import Any, Dict, Optional

from .hashing import stable_hash

_STORE: Dict[str, Dict[str, Any]] = {}
_LOCK = threading.Lock()


def sample_key(x: Any) -> str:
    if isinstance(x, dict):
        return stable_hash({k: x.get(k) for k in ("doc_id", "text", "instruction")})
    return stable_hash(str(x))


def record(key: str, decision: Dict[str, Any]) -> None:
    """Store the router's decision under ``sample_key(x)``."""
    with _LOCK:
        _STORE[key] = dict(decision)


def lookup(key: str) -> Optional[Dict[str, Any]]:
    with _LOCK:
        d = _STORE.get(key)
        return dict(d) if d else None


def clear() -> None:
    """Forget every decision (between independent runs and tests)."""
    with _LOCK:
        _STORE.clear()
