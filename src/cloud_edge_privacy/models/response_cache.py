"""On-disk response cache keyed by a stable hash; safe across processes (atomic writes).

A replayed answer is labelled by its callers (``cache_hit``) and never counts for latency.  With the environment
variable ``CEP_NO_CACHE=1`` (``cloud-edge-privacy run --no-cache`` sets it for the run) every lookup is a miss:
each answer comes from a model run, so a failing cloud fails instead of being hidden by replays.  Entries are
still written.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Optional

from ..hashing import stable_hash

NO_CACHE_ENV = "CEP_NO_CACHE"


def cache_reads_refused() -> bool:
    """``$CEP_NO_CACHE`` is set to a true value: cached answers are refused."""
    return os.environ.get(NO_CACHE_ENV, "").strip().lower() in ("1", "true", "yes", "on")


class ResponseCache:
    def __init__(self, directory: Path) -> None:
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)

    def key(self, payload: Any) -> str:
        return stable_hash(payload)

    def _path(self, key: str) -> Path:
        return self.dir / key[:2] / f"{key}.json"

    def get(self, key: str) -> Optional[Any]:
        if cache_reads_refused():
            return None
        p = self._path(key)
        if not p.is_file():
            return None
        try:
            return json.loads(p.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return None  # a torn or corrupt entry is a miss, never an error

    def put(self, key: str, value: Any) -> None:
        p = self._path(key)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, p)
