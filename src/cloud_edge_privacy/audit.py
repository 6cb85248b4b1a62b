"""The audit log: what is about to leave the edge, written BEFORE each attempt (docs/design.md invariant 3), and
the one definition of "what was sent" (:func:`outgoing_texts`, :func:`sent_text`) that the egress guard and
the leakage metrics both read."""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence


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
            # several worker processes may share one file: an advisory lock on its folder makes the size check,
            # the rotation and the append one step, so two processes never rotate at once
            folder = os.open(self.path.parent, os.O_RDONLY)
            try:
                fcntl.flock(folder, fcntl.LOCK_EX)
                if self.max_bytes and self.path.exists() and self.path.stat().st_size + len(line) > self.max_bytes:
                    os.replace(self.path, self.path.with_name(self.path.name + ".1"))
                with open(self.path, "a", encoding="utf-8") as fh:
                    fh.write(line)
                    fh.flush()
                    os.fsync(fh.fileno())
            finally:
                os.close(folder)  # releases the lock


def body_sha256(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def outgoing_texts(messages: Sequence[Dict[str, Any]]) -> List[str]:
    """Every text that a request's messages carry: contents, text parts, tool-call names and arguments,
    participant names.  The egress guard scans these; the leakage metrics search these."""
    out: List[str] = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out += [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
        for call in m.get("tool_calls") or []:
            fn = call.get("function") or {}
            out += [v for v in (fn.get("name"), fn.get("arguments")) if isinstance(v, str)]
        if isinstance(m.get("name"), str):
            out.append(m["name"])
    return out


def sent_text(messages: Optional[Sequence[Dict[str, Any]]]) -> str:
    """What left the edge in one request, as one text ('' when nothing did): the audit line's ``messages``
    and a result's ``sent_messages`` (the same object the cloud client audited) read the same way."""
    return "\n".join(outgoing_texts(messages)) if messages else ""
