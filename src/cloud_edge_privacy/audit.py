"""The audit log: what is about to leave the edge, written BEFORE each attempt (DESIGN.md invariant 3)."""
from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from pathlib import Path
from typing import Any, Dict, Optional


class AuditLog:
    """Append-only JSON lines; every write is flushed and fsynced before the caller proceeds.

    ``record_content=False`` keeps request hashes and metadata only (the proxy's default: no raw values in
    logs); the benchmark records the exact desensitized messages so leakage is measured on real traffic.
    ``max_bytes`` rotates the file (``.1`` suffix) when it grows past the limit.
    """

    def __init__(self, path: Path, record_content: bool = True, max_bytes: Optional[int] = None) -> None:
        self.path = Path(path)
        self.record_content = record_content
        self.max_bytes = max_bytes
        self._lock = threading.Lock()

    def write(self, entry: Dict[str, Any]) -> None:
        """Append one entry; raises on any I/O error so that the caller sends nothing."""
        entry = dict(entry, time=round(time.time(), 3))
        if not self.record_content:
            entry.pop("messages", None)
            entry.pop("body", None)
        line = json.dumps(entry, ensure_ascii=False, default=str) + "\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self.max_bytes and self.path.exists() and self.path.stat().st_size + len(line) > self.max_bytes:
                os.replace(self.path, self.path.with_name(self.path.name + ".1"))
            with open(self.path, "a", encoding="utf-8") as fh:
                fh.write(line)
                fh.flush()
                os.fsync(fh.fileno())


def body_sha256(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()
