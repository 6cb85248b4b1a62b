"""One-pass restoration of surrogates and placeholders in a model's answer (on the edge).

Every surrogate is matched in a single regex pass, longest alternative first, so restoring one value can
never rewrite part of another ("Anna Aldana" and "John Hall" cannot both come back as "... Hall").
"""
from __future__ import annotations

import re
import threading
from typing import Dict, Mapping, Optional, Pattern


class OnePassRestorer:
    """Replace each surrogate by its original in one pass; thread-safe (``add`` may run concurrently)."""

    def __init__(self, mapping: Optional[Mapping[str, str]] = None, ignore_case: bool = True) -> None:
        self._map: Dict[str, str] = {}
        self._lower: Dict[str, str] = {}
        self._pattern: Optional[Pattern[str]] = None
        self._ignore_case = ignore_case
        self._lock = threading.Lock()
        for sur, orig in (mapping or {}).items():
            self.add(sur, orig)

    def add(self, surrogate: str, original: str) -> None:
        if not surrogate or surrogate == original:
            return
        with self._lock:
            self._map.setdefault(surrogate, original)
            self._lower.setdefault(_squash(surrogate).lower(), self._map[surrogate])
            self._pattern = None

    @property
    def mapping(self) -> Dict[str, str]:
        with self._lock:
            return dict(self._map)

    def _compiled(self) -> Optional[Pattern[str]]:
        with self._lock:
            if self._pattern is None and self._map:
                alts = sorted(self._map, key=len, reverse=True)
                body = "|".join(r"\s+".join(re.escape(t) for t in s.split()) if s.split() else re.escape(s)
                                for s in alts)
                # word boundaries only where the surrogate itself starts/ends with a word character
                self._pattern = re.compile(rf"(?:(?<!\w)(?=\w)|(?!\w))(?:{body})(?:(?<=\w)(?!\w)|(?<!\w))",
                                           re.IGNORECASE if self._ignore_case else 0)
            return self._pattern

    def restore(self, text: str) -> str:
        pattern = self._compiled()
        if pattern is None:
            return text

        def put(m: "re.Match[str]") -> str:
            found = m.group()
            original = self._map.get(found) or self._lower.get(_squash(found).lower(), found)
            shouted = found.isupper() and len(found) > 1 and not any(s.isupper() for s in self._map if s == found)
            return original.upper() if shouted and not original.isupper() else original

        return pattern.sub(put, text)


def _squash(s: str) -> str:
    return " ".join(s.split())
