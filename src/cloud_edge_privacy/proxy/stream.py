"""Restoration of surrogates and placeholders in answers that arrive piece by piece.

A streamed answer may split a surrogate over chunks ("Ann", "a Be", "rg").  :class:`StreamRestorer` holds
back the shortest tail of the text received so far that could still be the start of a surrogate, restores
everything before it with the same one-pass pattern as :class:`~..desensitization.restore.OnePassRestorer`,
and emits every received character exactly once.  The concatenation of everything it emits equals
``OnePassRestorer(mapping).restore(full_text)`` (tested on random chunkings).
"""
from __future__ import annotations

import json
import re
from typing import Dict, List, Mapping, Optional, Pattern

from ..desensitization.restore import OnePassRestorer


def _squash_lower(s: str) -> str:
    """Whitespace runs as one space, lower case: the restorer's pattern is this lenient, so is the hold."""
    return re.sub(r"\s+", " ", s).lower()


class _PatternRestorer(OnePassRestorer):
    """An :class:`OnePassRestorer` that exposes its compiled pattern (the alternation, longest first)."""

    def pattern(self) -> Optional[Pattern[str]]:
        return self._compiled()


class StreamRestorer:
    """``feed(chunk) -> text to emit now``; ``flush() -> the rest`` at the end of the stream.

    Not thread-safe: one instance per streamed field (a choice's content, one tool call's arguments).
    """

    def __init__(self, mapping: Mapping[str, str], ignore_case: bool = True) -> None:
        self._restorer = _PatternRestorer(mapping, ignore_case=ignore_case)
        self._pattern = self._restorer.pattern()
        self._prefixes = sorted({_squash_lower(s) for s in self._restorer.mapping})
        self._max_len = max((len(p) for p in self._prefixes), default=0)
        self._pending = ""
        self._prev = ""  # the last source character already emitted (the pattern's look-behind needs it)

    def _hold_from(self) -> int:
        """Smallest i such that ``pending[i:]`` could still grow into a surrogate (len(pending): none)."""
        text, hold = self._pending, len(self._pending)
        for i in range(len(text) - 1, -1, -1):
            tail = _squash_lower(text[i:])
            if len(tail) > self._max_len and len(tail.lstrip()) > self._max_len:
                break
            if any(p.startswith(tail) for p in self._prefixes):
                hold = i
        return hold

    def _emit(self, limit: int, final: bool) -> str:
        full = self._prev + self._pending
        base = len(self._prev)
        limit += base
        out: List[str] = []
        pos = base
        for m in self._pattern.finditer(full, base) if self._pattern is not None else ():
            if m.start() >= limit:
                break
            if m.end() == len(full) and not final:
                limit = m.start()  # its right boundary is not known yet
                break
            out.append(full[pos:m.start()])
            out.append(self._restorer.restore(m.group()))
            pos = m.end()
            limit = max(limit, pos)
        out.append(full[pos:limit])
        if limit > base:
            self._prev = full[limit - 1]
        self._pending = full[limit:]
        return "".join(out)

    def feed(self, chunk: str) -> str:
        """Take the next piece of the answer; return what can be emitted without risk of a split surrogate."""
        if not chunk:
            return ""
        self._pending += chunk
        if self._pattern is None:
            out, self._pending = self._pending, ""
            return out
        return self._emit(self._hold_from(), final=False)

    def flush(self) -> str:
        """End of the field: restore and return everything still held back."""
        if not self._pending:
            return ""
        if self._pattern is None:
            out, self._pending = self._pending, ""
            return out
        return self._emit(len(self._pending), final=True)


def json_escaped_mapping(mapping: Mapping[str, str]) -> Dict[str, str]:
    """The mapping as it appears inside JSON string literals (tool-call arguments are JSON text), in both
    the ``ensure_ascii`` and the raw UTF-8 spelling."""
    out: Dict[str, str] = {}
    for sur, orig in mapping.items():
        for ascii_only in (False, True):
            esc_sur = json.dumps(sur, ensure_ascii=ascii_only)[1:-1]
            out.setdefault(esc_sur, json.dumps(orig, ensure_ascii=ascii_only)[1:-1])
    return out
