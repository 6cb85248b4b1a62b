"""Restoration of surrogates and placeholders in a model's answer (on the edge), whole or piece by piece.

Every surrogate is matched in a single regex pass, longest alternative first, so restoring one value can
never rewrite part of another ("Anna Aldana" and "John Hall" cannot both come back as "... Hall").

What is restored (the answer comes from the cloud, which may be the adversary):

* **only whole surrogates this request issued**, matched case-insensitively ("18 AUGUST 2024",
  "PAUL.AGULLO@MAIL.EXAMPLE"); a one-word surrogate with capitals ("Agullo", "Nice") is not restored
  from an all-lower-case occurrence, which is an ordinary word;
* a surname-like token (one word of a person surrogate) is not restored when it is part of a foreign full
  name: "Mr Gustavo Agullo", where "Gustavo" is a given name (public name lists) but not a surrogate this
  request issued, stays as it is;
* **never inside links**: a surrogate inside (not the whole of) a URL-like token (``scheme://``, ``www.``, ``mailto:``, a host
  followed by a path or query, a bare host name), a markdown link or image target ``](...)`` or an HTML tag
  (its attributes) is left as the surrogate, so a rendered image or a followed link cannot carry the real
  value to a third party.  :meth:`OnePassRestorer.restore_report` counts these ``withheld`` matches.

:class:`StreamRestorer` restores an answer that arrives in chunks with exactly the same decisions: the
concatenation of everything it emits equals :meth:`OnePassRestorer.restore` of the whole text.
"""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Pattern, Set, Tuple

from ..vocabulary import TITLES, tolerant_body

# Characters that end a link-like token (a URL runs until whitespace or one of these).
_TOKEN_END = set("<>\"'`")
# A token longer than this that is still being read counts as a link (bounded memory while streaming).
MAX_TOKEN = 2048
_PUNCT = ".,;:!?()[]{}*_"
_CONTEXT = 64  # characters of already-emitted text kept for the look-behind (previous word)
_PREV_WORD = re.compile(r"([^\W\d_][\w'’.-]{0,30})\s+$")
_HOST_PATH = re.compile(r"[\w-]\.[A-Za-z]{2,}(?::\d+)?[/?#]")
_BARE_HOST = re.compile(r"[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}")
# Capitalised words that start sentences or address people: not a foreign given name before a surname.
_NOT_GIVEN = frozenset({
    "the", "a", "an", "and", "or", "but", "if", "then", "so", "as", "at", "by", "for", "from", "in", "into",
    "of", "on", "to", "with", "without", "about", "after", "before", "since", "when", "while", "where", "that",
    "this", "these", "those", "his", "her", "their", "our", "your", "my", "its", "dear", "hi", "hello", "thanks",
    "thank", "yes", "no", "not", "also", "both", "all", "per", "via", "re", "cc", "attn", "herr", "frau",
    "madame", "family", "according", "said", "says", "wrote", "told", "asked", "against",
    "versus", "v", "vs", "between", "because", "although", "whereas", "regarding", "concerning", "meanwhile",
}) | TITLES


def _squash(s: str) -> str:
    return " ".join(s.split())


def link_like(token: str) -> bool:
    """Whether a whitespace-free token would be rendered or followed as a link (URL, host, mailto)."""
    low = token.lower()
    if "://" in low or low.startswith("www.") or "mailto:" in low or _HOST_PATH.search(token):
        return True
    bare = token.strip(_PUNCT)
    return "@" not in bare and _BARE_HOST.fullmatch(bare) is not None


@dataclass
class _Scanner:
    """Left-to-right state that marks characters inside markdown link targets and HTML tags (unsafe)."""

    md_depth: int = 0      # > 0 inside ``](...)``: the parenthesis depth
    tag: bool = False      # inside ``<tag ...>``
    quote: str = ""        # the quote character of an attribute value inside a tag
    prev: str = ""         # the previous character

    def copy(self) -> "_Scanner":
        return _Scanner(self.md_depth, self.tag, self.quote, self.prev)

    def step(self, c: str) -> bool:
        """Advance over ``c``; True when ``c`` is inside a link target or a tag."""
        prev, self.prev = self.prev, c
        if self.tag:
            if self.quote:
                self.quote = "" if c == self.quote else self.quote
            elif c in "\"'":
                self.quote = c
            elif c == ">":
                self.tag = False
            return True
        if self.md_depth:
            if c == "(":
                self.md_depth += 1
            elif c == ")":
                self.md_depth -= 1
            elif c == "\n":
                self.md_depth = 0
            return True
        if c == "(" and prev == "]":
            self.md_depth = 1
            return True
        if prev == "<" and (c.isalpha() or c in "/!?"):
            self.tag = True
            return True
        return False

    def run(self, text: str) -> List[bool]:
        if not self.md_depth and not self.tag and "<" not in self.prev + text and "](" not in self.prev + text:
            self.prev = text[-1:] or self.prev  # nothing can open a link target or a tag: all safe
            return [False] * len(text)
        return [self.step(c) for c in text]


@dataclass
class Restored:
    """An answer with the originals put back; ``withheld`` surrogates were left in links on purpose."""

    text: str
    withheld: int = 0


@dataclass
class _Entry:
    original: str
    name_token: bool = False  # one word of a person surrogate


class OnePassRestorer:
    """Replace each surrogate by its original in one pass; thread-safe (``add`` may run concurrently)."""

    def __init__(self, mapping: Optional[Mapping[str, str]] = None,
                 given_name: Optional[Callable[[str], bool]] = None) -> None:
        """``given_name``: whether a word is a given name (public name lists); without it any capitalised
        word before a surname token counts as one."""
        self.given_name = given_name
        self._map: Dict[str, _Entry] = {}
        self._lower: Dict[str, _Entry] = {}
        self._pattern: Optional[Pattern[str]] = None
        self._lock = threading.Lock()
        for sur, orig in (mapping or {}).items():
            self.add(sur, orig)

    def add(self, surrogate: str, original: str, name_token: bool = False) -> None:
        """Register a surrogate; ``name_token``: one word of a person surrogate (see the module docstring)."""
        if not surrogate or surrogate == original:
            return
        with self._lock:
            entry = self._map.setdefault(surrogate, _Entry(original, name_token))
            entry.name_token = entry.name_token or name_token
            low = self._lower.setdefault(_squash(surrogate).lower(), _Entry(entry.original, entry.name_token))
            low.name_token = low.name_token or name_token
            self._pattern = None

    @classmethod
    def merged(cls, restorers: Iterable["OnePassRestorer"]) -> "OnePassRestorer":
        """One restorer for several (an earlier one wins where two register the same surrogate)."""
        out = cls()
        for r in restorers:
            out.given_name = out.given_name or r.given_name
            for sur, entry in r.entries().items():
                out.add(sur, entry.original, entry.name_token)
        return out

    def entries(self) -> Dict[str, _Entry]:
        with self._lock:
            return {k: _Entry(v.original, v.name_token) for k, v in self._map.items()}

    @property
    def mapping(self) -> Dict[str, str]:
        """surrogate -> original."""
        with self._lock:
            return {k: v.original for k, v in self._map.items()}

    def name_tokens(self) -> Set[str]:
        """Lower-case person-surrogate words this restorer issued."""
        with self._lock:
            return {k for k, v in self._lower.items() if v.name_token}

    def pattern(self) -> Optional[Pattern[str]]:
        """The alternation of every surrogate, longest first, whitespace-tolerant, case-insensitive."""
        with self._lock:
            if self._pattern is None and self._map:
                alts = sorted(self._map, key=len, reverse=True)
                body = "|".join(tolerant_body(s) if s.split() else re.escape(s) for s in alts)
                # word boundaries only where the surrogate itself starts/ends with a word character
                self._pattern = re.compile(rf"(?:(?<!\w)(?=\w)|(?!\w))(?:{body})(?:(?<=\w)(?!\w)|(?<!\w))",
                                           re.IGNORECASE)
            return self._pattern

    def _entry(self, found: str) -> Optional[_Entry]:
        with self._lock:
            return self._map.get(found) or self._lower.get(_squash(found).lower())

    def replacement(self, found: str) -> str:
        """The original for a matched surrogate, upper-cased when the answer shouts it."""
        entry = self._entry(found)
        if entry is None:
            return found
        original = entry.original
        with self._lock:
            exact = found in self._map
        shouted = found.isupper() and len(found) > 1 and not exact
        return original.upper() if shouted and not original.isupper() else original

    def plausible(self, found: str, before: str, issued: Set[str]) -> bool:
        """Whether a case-insensitive match is a real occurrence of the surrogate (``before``: the text
        just before it)."""
        entry = self._entry(found)
        if entry is None:
            return False
        words = found.split()
        single = len(words) == 1 and found.isalpha()
        with self._lock:
            exact = found in self._map
        if single and found.islower() and not exact:
            return False  # "nice" is a word; the surrogate was "Nice"
        if entry.name_token and single:
            m = _PREV_WORD.search(before)
            if m:
                prev = m.group(1).rstrip(".")
                if (prev[:1].isupper() and not prev.isupper() and prev.lower() not in _NOT_GIVEN
                        and prev.lower() not in issued and not m.group(1).endswith(".")
                        and (self.given_name is None or self.given_name(prev))):
                    return False  # "Gustavo Agullo": a foreign full name, not our surrogate
        return True

    def restore(self, text: str) -> str:
        return self.restore_report(text).text

    def restore_report(self, text: str) -> Restored:
        """Restore ``text``; also count the surrogates withheld because they stand inside links."""
        stream = StreamRestorer(self)
        out = stream.feed(text) + stream.flush()
        return Restored(out, stream.withheld)


class StreamRestorer:
    """``feed(chunk) -> text to emit now``; ``flush() -> the rest`` at the end of the field.

    Holds back the shortest tail that could still grow into a surrogate, and a found surrogate until the end
    of its token is seen (a link is recognised by the whole token); every received character is emitted
    exactly once.  Not thread-safe: one instance per streamed field.
    """

    def __init__(self, restorer: OnePassRestorer) -> None:
        self._restorer = restorer
        self._pattern = restorer.pattern()
        self._issued = restorer.name_tokens()
        self._prefixes = sorted({_squash(s).lower() for s in restorer.mapping})
        self._max_len = max((len(p) for p in self._prefixes), default=0)
        self._pending = ""
        self._ctx = ""             # already emitted source text: the current token, at least _CONTEXT chars
        self._scanner = _Scanner()  # state after the emitted source text
        self.withheld = 0

    def _hold_from(self) -> int:
        """Smallest i such that ``pending[i:]`` could still grow into a surrogate (len(pending): none)."""
        text, hold = self._pending, len(self._pending)
        for i in range(len(text) - 1, -1, -1):
            tail = re.sub(r"\s+", " ", text[i:]).lower()
            if len(tail) > self._max_len and len(tail.lstrip()) > self._max_len:
                break
            if any(p.startswith(tail) for p in self._prefixes):
                hold = i
        return hold

    def _token_span(self, full: str, start: int, end: int, final: bool) -> Optional[Tuple[int, int]]:
        """The whitespace-free run(s) around ``full[start:end]``; None when its end is not known yet."""
        lo = start
        while lo > 0 and not full[lo - 1].isspace() and full[lo - 1] not in _TOKEN_END:
            lo -= 1
        hi = end
        while hi < len(full) and not full[hi].isspace() and full[hi] not in _TOKEN_END:
            hi += 1
        if hi == len(full) and not final:
            return None
        return lo, hi

    def _emit(self, limit: int, final: bool) -> str:
        full = self._ctx + self._pending
        base = len(self._ctx)
        flags = self._scanner.copy().run(self._pending)
        limit += base
        out: List[str] = []
        pos = base
        for m in self._pattern.finditer(full, base) if self._pattern is not None else ():
            if m.start() >= limit:
                break
            span = self._token_span(full, m.start(), m.end(), final)
            if span is None or (m.end() == len(full) and not final):
                limit = m.start()  # its right boundary (or its token's) is not known yet
                break
            out.append(full[pos:m.start()])
            found = m.group()
            lo, hi = span
            whole = full[lo:hi].strip(_PUNCT) == found  # the surrogate is the whole token (a URL value itself)
            in_link = (any(flags[m.start() - base:m.end() - base]) or m.start() - lo >= MAX_TOKEN
                       or (lo == 0 and len(self._ctx) >= MAX_TOKEN)
                       or (not whole and any(link_like(t) for t in full[lo:hi].split())))
            if in_link:
                self.withheld += 1
                out.append(found)
            elif self._restorer.plausible(found, full[max(0, m.start() - _CONTEXT):m.start()], self._issued):
                out.append(self._restorer.replacement(found))
            else:
                out.append(found)
            pos = m.end()
            limit = max(limit, pos)
        out.append(full[pos:limit])
        emitted = full[base:limit]
        self._scanner.run(emitted)
        ctx = self._ctx + emitted
        cut = len(ctx)
        while cut > 0 and not ctx[cut - 1].isspace() and ctx[cut - 1] not in _TOKEN_END and len(ctx) - cut < MAX_TOKEN:
            cut -= 1
        self._ctx = ctx[max(0, min(cut, len(ctx) - _CONTEXT)):]
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
