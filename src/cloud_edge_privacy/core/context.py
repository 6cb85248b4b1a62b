"""The run context: what one benchmark run (or one proxy process) shares between its components.

Sedna builds the edge model, the router and the cloud module separately and hands the cloud module the raw
sample (docs/ianvs-contract.md §4), so the router's decision and the shared privacy profile need a channel.  That
channel is this object, never the caller's word: the router records its decision here, the cloud adapter
reads it, and a missing decision means the cloud adapter applies its own protection anyway.

One process-wide :class:`ContextRegistry` maps an output folder (Ianvs's ``RESULT_SAVED_URL``) to its
context; it is the single piece of shared state in the package and it is lock-protected.
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Optional, Union

from ..audit import AuditLog
from ..hashing import stable_hash
from ..results import RouteDecision


def sample_key(x: Any) -> str:
    """Stable key of a sample (doc_id, text, instruction); never Python's salted ``hash()``."""
    if isinstance(x, dict):
        return stable_hash({k: x.get(k) for k in ("doc_id", "text", "instruction")})
    return stable_hash(str(x))


@dataclass
class RunContext:
    """Shared per run: routing decisions, detectors (with their per-text cache) and the audit log."""

    output_dir: Path
    _decisions: Dict[str, RouteDecision] = field(default_factory=dict)
    _detectors: Dict[str, Any] = field(default_factory=dict)
    _audit: Optional[AuditLog] = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # -- routing decisions ------------------------------------------------------------------------
    def record_decision(self, key: str, decision: Union[RouteDecision, Dict[str, Any]]) -> None:
        """Record a router's decision (a dict is read as its serialised form)."""
        if isinstance(decision, dict):
            decision = RouteDecision.from_dict(decision)
        with self._lock:
            self._decisions[key] = decision

    def decision(self, key: str) -> Optional[RouteDecision]:
        with self._lock:
            return self._decisions.get(key)

    def clear_decisions(self) -> None:
        with self._lock:
            self._decisions.clear()

    # -- shared components --------------------------------------------------------------------------
    def detector(self, preset: str = "default") -> Any:
        """One detector per preset per run, with a small per-text cache (profile, router and gateway
        see the same text once)."""
        from ..detection import build_detector

        with self._lock:
            det = self._detectors.get(preset)
        if det is None:
            det = build_detector(preset)
            det.cache_size = max(det.cache_size, 64)
            with self._lock:
                det = self._detectors.setdefault(preset, det)
        return det

    @property
    def audit(self) -> AuditLog:
        with self._lock:
            if self._audit is None:
                self._audit = AuditLog(self.output_dir / "cloud_audit.jsonl")
            return self._audit


class ContextRegistry:
    """Output folder -> :class:`RunContext` (thread-safe)."""

    def __init__(self) -> None:
        self._contexts: Dict[str, RunContext] = {}
        self._lock = threading.Lock()

    def get(self, output_dir: Optional[str] = None) -> RunContext:
        """The context of ``output_dir``, else of ``$RESULT_SAVED_URL`` (set by Ianvs and our runner)."""
        key = os.path.abspath(output_dir or os.environ.get("RESULT_SAVED_URL") or os.path.join("workspace", "unnamed"))
        with self._lock:
            if key not in self._contexts:
                self._contexts[key] = RunContext(Path(key))
            return self._contexts[key]

    def drop(self, output_dir: str) -> None:
        with self._lock:
            self._contexts.pop(os.path.abspath(output_dir), None)


CONTEXTS = ContextRegistry()
