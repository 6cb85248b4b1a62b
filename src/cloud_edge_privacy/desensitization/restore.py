"""Restoration of surrogates and placeholders in a model's answer (on the edge), whole or piece by piece.

The answer comes from the cloud, which may be the adversary: it sees the surrogates and can write an answer
designed to make the edge put the real values where it can read them back (a link the client's renderer
fetches, an image, a tool call an agent executes).  So restoration is an **allow-list decided by parsers**:

* a surrogate is restored only where a reader sees prose: inside a *text node* of a CommonMark parse of the
  answer (markdown-it-py; tables and strikethrough on), never in a link or image destination or title, a
  reference definition, an autolink, raw HTML, inline code or a code block;
* and only when the whitespace-delimited token around it is the surrogate with prose punctuation (quotes,
  brackets, a possessive or plural ending): a token that a URL, host, IP address or e-mail reading accepts
  (a scheme, ``//``, ``www.``, ``@``, a dotted host name, an IP, a query ``?``/``=``/``&``, a path ``/``,
  percent-encoding), whatever precedes the surrogate, keeps the surrogate.  A surrogate glued to another word
  (``Agullo-Jones``) is not restored either (no half-surrogate mixes).

Every surrogate left for one of these reasons is counted (``withheld``); the proxy tells the client.

Only whole surrogates this request issued are restored, in one regex pass, longest alternative first (so
restoring one value can never rewrite part of another), case-insensitively ("18 AUGUST 2024"); a one-word
surrogate is not restored from an all-lower-case word (an ordinary word); a person-surrogate word is not
restored inside a foreign full name ("Mr Gustavo Agullo", "Paul Hernandez"); a person word followed by "s"
or "es" is restored as the plural of the original ("the Agullos" -> "the Smiths").  Surrogates are
registered without the punctuation or labels they share with their original (a phone number's ")", the
word "IBAN").

:class:`StreamRestorer` restores an answer that arrives in chunks with exactly the same decisions:
text without a possible surrogate is emitted at once; from a surrogate on, text is held until the Markdown
block around it has ended (a blank line) or the answer ends, because a later character can still turn it
into a code span, a link target or an HTML attribute.  The concatenation of everything it emits equals
:meth:`OnePassRestorer.restore` of the whole text (which runs the same code).
"""
from __future__ import annotations

import ipaddress
import re
import secrets
import string
import threading
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Pattern, Set, Tuple

from ..vocabulary import TITLES, tolerant_body

_PUNCT = ".,;:!?()[]{}*_"
_CONTEXT = 64  # characters of source text kept for the look-behind (previous word)
_PREV_WORD = re.compile(r"([^\W\d_][\w'’.-]{0,30})\s+$")
_NEXT_WORD = re.compile(r"[ \t]([A-Z][a-z][\w'’-]{0,30})\b")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_NEXT_COMPLETE = re.compile(r"[ \t]*\S+\s|\s*\n")
_INDENTED_LINE = re.compile(r"\n(?: {4}|\t)")
_ASCII_WS = " \t\n\r\f\v"
# Prose punctuation allowed around a restored surrogate inside its whitespace-delimited token.
_OPEN_PUNCT = set("\"'([{*_~“‘«¿¡—–")
_CLOSE = re.compile(r"(?:['’]s?)?[.,;:!?)\]}*_~\"'”’»—–…]*\Z")
# A token that a URL, host, IP or e-mail reading would accept (any of these anywhere in it).
_SCHEME = re.compile(r"(?:^|[^A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,30}:(?!\s)")
_HOST = re.compile(r"[\w-]\.(?:[^\W\d_]|xn--)[\w-]*", re.UNICODE)
_IPV4 = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_LINKY_CHARS = set("/\\@?=&#<>|")
# A parse window longer than this (a Markdown block that never ends) or more parsing than the budget: every
# further surrogate is withheld (bounded time per answer, fails closed).
MAX_WINDOW = 65_536
MAX_PARSED = 4_000_000
# Capitalised words that start sentences or address people: not a foreign given name before a surname.
_NOT_GIVEN = frozenset({
    "the", "a", "an", "and", "or", "but", "if", "then", "so", "as", "at", "by", "for", "from", "in", "into",
    "of", "on", "to", "with", "without", "about", "after", "before", "since", "when", "while", "where", "that",
    "this", "these", "those", "his", "her", "their", "our", "your", "my", "its", "dear", "hi", "hello", "thanks",
    "thank", "yes", "no", "not", "also", "both", "all", "per", "via", "re", "cc", "attn", "herr", "frau",
    "madame", "family", "according", "said", "says", "wrote", "told", "asked", "against",
    "versus", "v", "vs", "between", "because", "although", "whereas", "regarding", "concerning", "meanwhile",
    "is", "was", "were", "are", "has", "had", "have", "will", "would", "can", "could", "should", "may", "might",
    "did", "does", "do", "who", "which", "whose", "what", "how", "why", "i", "we", "you", "he", "she", "they",
    "it", "here", "there", "now", "today", "please", "regards", "sincerely", "best", "kind",
}) | TITLES


def _squash(s: str) -> str:
    return " ".join(s.split())


def english_plural(word: str) -> str:
    """The plural of a family name ("Smith" -> "Smiths", "Hawkins" -> "Hawkinses")."""
    return word + ("es" if re.search(r"(?:s|x|z|ch|sh)$", word, re.IGNORECASE) else "s")


def link_like(token: str) -> bool:
    """Whether a whitespace-free token holds anything a URL, host, IP-address or e-mail reading accepts
    (a renderer may turn it into a link, an agent may fetch it)."""
    t = token.strip(_PUNCT + "\"'“”‘’«»<>`")
    if not t:
        return False
    if "//" in t or "www." in t.lower() or any(c in _LINKY_CHARS for c in t) or _PERCENT.search(t):
        return True
    if _SCHEME.search(t) or _IPV4.search(t) or _HOST.search(t):
        return True
    if ":" in t and t.count(":") >= 2:  # IPv6 and host:port forms
        return True
    try:
        ipaddress.ip_address(t.strip("[]"))
        return True
    except ValueError:
        return False


def _run_bounds(full: str, start: int, end: int) -> Tuple[int, int]:
    """The ASCII-whitespace-delimited run around ``full[start:end]`` (a URL runs until whitespace)."""
    lo = start
    while lo > 0 and full[lo - 1] not in _ASCII_WS:
        lo -= 1
    hi = end
    while hi < len(full) and full[hi] not in _ASCII_WS:
        hi += 1
    return lo, hi


def token_verdict(full: str, start: int, end: int) -> str:
    """``"prose"`` (the surrogate stands as a word, with prose punctuation), ``"link"`` (its token is read as a
    URL, host, IP or e-mail) or ``"glued"`` (stuck to another word)."""
    lo, hi = _run_bounds(full, start, end)
    left, right = full[lo:start], full[end:hi]
    if (left or right) and link_like(left + "x" + right):
        return "link"
    if all(c in _OPEN_PUNCT for c in left) and _CLOSE.match(right):
        return "prose"
    return "glued"


@dataclass
class Restored:
    """An answer with the originals put back; ``withheld`` surrogates were left where a client may follow
    them (links, code, HTML, URL-like tokens) or glued to other words."""

    text: str
    withheld: int = 0


@dataclass
class _Entry:
    original: str
    name_token: bool = False  # one word of a person surrogate


def _label(word: str) -> bool:
    """A label a detector may take into a span: an acronym ("IBAN", "SSN") or a title ("Mr", "Dr.")."""
    w = word.rstrip(".:")
    return (len(w) >= 2 and w.isalpha() and w.isupper()) or w.lower() in TITLES


def _strip_shared(surrogate: str, original: str) -> Tuple[str, str]:
    """Drop the labels and punctuation a surrogate shares with its original at either end ("IBAN DE.. ." /
    "IBAN GB.. ." -> "DE.." / "GB.."; "+1 555 0100)" / "+44 20 7946)" -> without the ")"); shared ordinary
    words stay ("May 10, 2023" / "May 3, 2021" keeps its month)."""
    s, o = surrogate.strip(), original.strip()
    for _ in range(8):
        before = (s, o)
        sw, ow = s.split(), o.split()
        if len(sw) > 1 and len(ow) > 1 and sw[0] == ow[0] and _label(sw[0]):
            s, o = s[len(sw[0]):].lstrip(), o[len(ow[0]):].lstrip()
        sw, ow = s.split(), o.split()
        if len(sw) > 1 and len(ow) > 1 and sw[-1] == ow[-1] and _label(sw[-1]):
            s, o = s[:-len(sw[-1])].rstrip(), o[:-len(ow[-1])].rstrip()
        while len(s) > 1 and len(o) > 1 and s[0] == o[0] and not s[0].isalnum() and s[0] not in "[<+#$€£":
            s, o = s[1:].lstrip(), o[1:].lstrip()
        while len(s) > 1 and len(o) > 1 and s[-1] == o[-1] and not s[-1].isalnum() and s[-1] not in "]>":
            s, o = s[:-1].rstrip(), o[:-1].rstrip()
        if (s, o) == before:
            break
    return (s, o) if s and o else (surrogate, original)


class OnePassRestorer:
    """Replace each surrogate by its original in one pass; thread-safe (``add`` may run concurrently)."""

    def __init__(self, mapping: Optional[Mapping[str, str]] = None,
                 given_name: Optional[Callable[[str], bool]] = None) -> None:
        """``given_name``: whether a word is a given name (public name lists); without it any capitalised
        word before a surname token counts as one."""
        self.given_name = given_name
        self.had_given_name = False  # True after unpickling a restorer that had one (the receiver sets it)
        self._map: Dict[str, _Entry] = {}
        self._lower: Dict[str, _Entry] = {}
        self._pattern: Optional[Pattern[str]] = None
        self._lock = threading.Lock()
        for sur, orig in (mapping or {}).items():
            self.add(sur, orig)

    def __getstate__(self) -> Dict[str, Any]:
        """Picklable (a worker process sends it back): the lock, the compiled pattern and the name-list
        callable stay behind (:meth:`__setstate__` makes new ones; the receiver may set ``given_name``)."""
        with self._lock:
            return {"map": dict(self._map), "lower": dict(self._lower), "had_given_name": self.given_name is not None}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self._map, self._lower = state["map"], state["lower"]
        self.given_name = None
        self.had_given_name = state.get("had_given_name", False)
        self._pattern = None
        self._lock = threading.Lock()

    def add(self, surrogate: str, original: str, name_token: bool = False) -> None:
        """Register a surrogate (without the words and punctuation it shares with its original);
        ``name_token``: one word of a person surrogate (see the module docstring)."""
        if not surrogate or surrogate == original:
            return
        surrogate, original = _strip_shared(surrogate, original)
        if not surrogate or surrogate == original:
            return
        with self._lock:
            entry = self._map.setdefault(surrogate, _Entry(original, name_token))
            entry.name_token = entry.name_token or name_token
            low = self._lower.setdefault(_squash(surrogate).lower(), _Entry(entry.original, entry.name_token))
            low.name_token = low.name_token or name_token
            self._pattern = None
        sw, ow = surrogate.split(), original.split()
        if (not name_token and len(sw) > 1 and len(ow) > 1 and sw[0].isalpha() and _label(ow[0])
                and ow[0].lower().rstrip(".:") not in TITLES
                and any(c.isdigit() for c in surrogate) and any(c.isdigit() for c in original)):
            # a label the detector took into the span ("IBAN GB29 ..."): the number alone comes back too
            self.add(surrogate[len(sw[0]):].strip(), original[len(ow[0]):].strip())

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

    def is_surrogate(self, text: str) -> bool:
        """Whether ``text`` (stripped) is exactly one surrogate this restorer issued (any letter case)."""
        with self._lock:
            t = text.strip()
            return t in self._map or _squash(t).lower() in self._lower

    def pattern(self) -> Optional[Pattern[str]]:
        """The alternation of every surrogate, longest first, whitespace-tolerant, case-insensitive; a person
        word may carry a plural ending (group ``pl``)."""
        with self._lock:
            if self._pattern is None and self._map:
                alts = sorted(self._map, key=len, reverse=True)
                body = "|".join(tolerant_body(s) if s.split() else re.escape(s) for s in alts)
                # word boundaries only where the surrogate itself starts/ends with a word character
                self._pattern = re.compile(rf"(?:(?<!\w)(?=\w)|(?!\w))(?P<s>{body})(?P<pl>e?s)?"
                                           rf"(?:(?<=\w)(?!\w)|(?<!\w))", re.IGNORECASE)
            return self._pattern

    def _entry(self, found: str) -> Optional[_Entry]:
        with self._lock:
            return self._map.get(found) or self._lower.get(_squash(found).lower())

    def replacement(self, found: str, plural: str = "") -> str:
        """The original for a matched surrogate (plural when the answer says "the Agullos"), upper-cased
        when the answer shouts it."""
        entry = self._entry(found)
        if entry is None:
            return found + plural
        original = english_plural(entry.original) if plural else entry.original
        with self._lock:
            exact = found in self._map
        shouted = found.isupper() and len(found) > 1 and not exact
        return original.upper() if shouted and not original.isupper() else original

    def plausible(self, found: str, before: str, issued: Set[str], after: str = "", plural: str = "") -> bool:
        """Whether a case-insensitive match is a real occurrence of the surrogate (``before``/``after``: the
        text around it)."""
        entry = self._entry(found)
        if entry is None:
            return False
        if plural and not entry.name_token:
            return False  # only person words take a plural ending
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
            n = _NEXT_WORD.match(after)
            if n and not plural:
                nxt = n.group(1)
                if nxt.lower() not in _NOT_GIVEN and nxt.lower() not in issued and \
                        (self.given_name is None or not self.given_name(nxt)):
                    return False  # "Paul Hernandez": a given-name surrogate before a foreign surname
        return True

    def restore(self, text: str) -> str:
        return self.restore_report(text).text

    def restore_report(self, text: str) -> Restored:
        """Restore ``text``; also count the surrogates withheld (see the module docstring)."""
        stream = StreamRestorer(self)
        out = stream.flush_text(text)
        return Restored(out, stream.withheld)


# -- the Markdown reading ----------------------------------------------------------------------------------
def _markdown() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


def _sentinel(nonce: str, k: int) -> str:
    letters = []
    for _ in range(5):
        k, r = divmod(k, 26)
        letters.append(string.ascii_lowercase[r])
    return f"Qz{nonce}{''.join(letters)}Zq"


def _texts(tokens: List[Any], safe: List[str], unsafe: List[str]) -> None:
    """Split what a parse shows into text nodes (prose a reader sees) and everything else (destinations,
    titles, code, raw HTML, fence info)."""
    for t in tokens:
        if t.type == "text":
            safe.append(t.content)
        elif t.type in ("inline", "image"):
            pass  # their content is the raw source of their children (and the alt text): see the children
        else:
            unsafe.append(t.content or "")
            unsafe.append(t.info or "")
        for v in (t.attrs or {}).values():
            unsafe.append(str(v))
        if t.children:
            _texts(t.children, safe, unsafe)


def prose_flags(md: Any, text: str, spans: List[Tuple[int, int]], env: Optional[Dict[str, Any]] = None
                ) -> Tuple[List[bool], List[Any]]:
    """For each ``(start, end)`` of ``text``: whether it lies in a text node of the Markdown parse (and
    nowhere else).  Each span is replaced by a unique letters-only sentinel before parsing.  Returns the
    flags and the block tokens (``env`` collects link reference definitions)."""
    nonce = "".join(secrets.choice(string.ascii_lowercase) for _ in range(6))
    parts, pos, marks = [], 0, []
    for k, (s, e) in enumerate(spans):
        parts.append(text[pos:s])
        marks.append(_sentinel(nonce, k))
        parts.append(marks[-1])
        pos = e
    parts.append(text[pos:])
    tokens = md.parse("".join(parts), env if env is not None else {})
    safe: List[str] = []
    unsafe: List[str] = []
    _texts(tokens, safe, unsafe)
    safe_s, unsafe_s = "\x00".join(safe), "\x00".join(unsafe)
    return [m in safe_s and m not in unsafe_s for m in marks], tokens


def _restartable(tokens: List[Any]) -> bool:
    """Whether a parse ending in a blank line ended at the top level (its last block a paragraph, heading or
    rule), so the next text can be parsed on its own with the same result."""
    top = [t for t in tokens if t.level == 0]
    return bool(top) and top[-1].type in ("paragraph_close", "heading_close", "hr")


class StreamRestorer:
    """``feed(chunk) -> text to emit now``; ``flush() -> the rest`` at the end of the field.

    Holds back the shortest tail that could still grow into a surrogate, and from a found surrogate on
    everything until the Markdown block around it has ended (a blank line); every received character is
    emitted exactly once.  Not thread-safe: one instance per streamed field.
    """

    def __init__(self, restorer: OnePassRestorer) -> None:
        self._restorer = restorer
        self._pattern = restorer.pattern()
        self._issued = restorer.name_tokens()
        self._prefixes = sorted({_squash(s).lower() for s in restorer.mapping})
        self._max_len = max((len(p) for p in self._prefixes), default=0) + 2  # + a plural ending
        self._md: Any = None
        self._env: Dict[str, Any] = {}
        self._win = ""        # source text since the last restart point, already emitted
        self._pre = ""        # the last _CONTEXT source characters before the window
        self._pending = ""    # received, not yet emitted
        self._parsed = 0
        self._abs = 0              # offset of the window's start in the whole answer
        self._prose_block = -1     # the block (by its start offset) whose surrogates were read as prose
        self._seg_abs = 0          # start offset of the current Markdown block (after the last blank line)
        self._scanned = 0          # blank lines were searched up to here
        self._clean = (-1, -1)     # (block start, checked up to): no construct opener in between
        self._last_flags: List[bool] = []
        self.withheld = 0

    def _hold_from(self, text: str) -> int:
        """Smallest i such that ``text[i:]`` could still grow into a surrogate (len(text): none)."""
        hold = len(text)
        for i in range(len(text) - 1, -1, -1):
            tail = re.sub(r"\s+", " ", text[i:]).lower()
            if len(tail) > self._max_len and len(tail.lstrip()) > self._max_len:
                break
            if any(p.startswith(tail) or (tail.startswith(p) and len(tail) <= len(p) + 2 and tail[len(p):].isalpha())
                   for p in self._prefixes):
                hold = i
        return hold

    def _advance(self, source: str) -> None:
        """``source`` was emitted; a long window without decisions is cut at a restartable blank line."""
        self._win += source
        if len(self._win) > MAX_WINDOW // 4 and self._parsed + len(self._win) <= MAX_PARSED:
            last = None
            for last in _BLANK_LINE.finditer(self._win):
                pass
            if last is not None:
                if self._md is None:
                    self._md = _markdown()
                env = {k: dict(v) if isinstance(v, dict) else v for k, v in self._env.items()}
                tokens = self._md.parse(self._win[:last.end()], env)
                self._parsed += last.end()
                if _restartable(tokens):
                    self._env = env
                    self._pre = (self._pre + self._win[:last.end()])[-_CONTEXT:]
                    self._abs += last.end()
                    self._win = self._win[last.end():]

    def _decide(self, full: str, base: int, b: int, matches: List["re.Match[str]"], blank: bool,
                parse_to: Optional[int] = None, known: Optional[bool] = None) -> str:
        """Restore ``full[base:b]`` (its surrogates ``matches``), parsing ``full[:parse_to or b]`` (unless
        ``known`` says whether they stand in prose)."""
        spans = [(m.start(), m.end()) for m in matches]
        pend = parse_to or b
        over = pend > MAX_WINDOW or self._parsed + pend > MAX_PARSED
        tokens: List[Any] = []
        env: Dict[str, Any] = {}
        if known is not None:
            flags, over = [known] * len(spans), True  # no parse: no restart decision either
        elif over:
            flags = [False] * len(spans)
        else:
            if self._md is None:
                self._md = _markdown()
            env = {k: dict(v) if isinstance(v, dict) else v for k, v in self._env.items()}
            flags, tokens = prose_flags(self._md, full[:pend], spans, env)
            self._parsed += pend
        self._last_flags = flags
        out, pos = [], base
        for m, prose in zip(matches, flags):
            out.append(full[pos:m.start()])
            found, plural = m.group("s"), m.group("pl") or ""
            before = (self._pre + full[:m.start()])[-_CONTEXT:]
            if not self._restorer.plausible(found, before, self._issued, full[m.end():m.end() + 40], plural):
                out.append(m.group())  # an ordinary word or a foreign name: not ours
            elif prose and token_verdict(full, m.start(), m.end()) == "prose":
                out.append(self._restorer.replacement(found, plural))
            else:
                self.withheld += 1
                out.append(m.group())
            pos = m.end()
        out.append(full[pos:b])
        if not over and blank and _restartable(tokens):
            self._env = env
            self._pre = (self._pre + full[:b])[-_CONTEXT:]
            self._win = ""
            self._abs += b
        else:
            self._advance(full[base:b])
        return "".join(out)

    def _early(self, full: str, base: int, m: "re.Match[str]") -> Optional[str]:
        """Decide the surrogate ``m`` before its Markdown block ends, when nothing before it in the block can
        open a construct that a later character closes (no backtick, ``<``, ``[``, ``]`` or ``~`` since the
        last blank line, no line indented as code after the block's first) and its token (and for a person
        word, the next word) is complete; None: wait for the block's end.  Once a surrogate of a block was
        read as prose, later ones in it (under the same conditions) are too, without parsing again."""
        for bl in _BLANK_LINE.finditer(full, max(0, self._scanned - self._abs - 8), m.start()):
            self._seg_abs = max(self._seg_abs, self._abs + bl.end())
        self._scanned = max(self._scanned, self._abs + m.start())
        seg = max(0, self._seg_abs - self._abs)
        _, hi = _run_bounds(full, m.start(), m.end())
        if hi >= len(full):
            return None
        entry = self._restorer._entry(m.group("s"))
        end = hi + 1
        if entry is not None and entry.name_token:  # the next word decides "Paul Hernandez": wait for it
            nxt = _NEXT_COMPLETE.match(full, hi)
            if nxt is None:
                return None
            end = nxt.end()
        start = seg
        if self._clean[0] == self._abs + seg and self._clean[1] - self._abs > seg:
            start = self._clean[1] - self._abs - 1  # checked already (from the character before, for "\n    ")
        region, pos = [], start
        for x in self._pattern.finditer(full, start, end) if self._pattern is not None else ():
            region.append(full[pos:x.start()])  # the surrogates themselves (placeholders have brackets) aside
            pos = x.end()
        region.append(full[pos:end])
        text = "".join(region)
        if any(c in "`<[]~" for c in text) or _INDENTED_LINE.search(text):
            return None
        self._clean = (self._abs + seg, self._abs + end)
        known = True if self._prose_block == self._abs + seg else None
        out = self._decide(full, base, m.end(), [m], False, parse_to=end, known=known)
        if self._last_flags == [True]:
            self._prose_block = self._abs + seg
        self._pending = full[m.end():]
        return out

    def _block_end(self, full: str, start: int) -> Optional[int]:
        """The end of the first blank line after ``start`` that no surrogate spans (None: not seen yet)."""
        pos = start
        while True:
            bl = _BLANK_LINE.search(full, pos)
            if bl is None:
                return None
            spanning = self._pattern.search(full, max(0, bl.start() - self._max_len),
                                            min(len(full), bl.end() + self._max_len))
            if spanning is None or not (spanning.start() < bl.end() and spanning.end() > bl.start()):
                return bl.end()
            pos = spanning.end()

    def _process(self, final: bool) -> str:
        out: List[str] = []
        while self._pending:
            full = self._win + self._pending
            base = len(self._win)
            hold = len(full) if final else base + self._hold_from(self._pending)
            first = self._pattern.search(full, base) if self._pattern is not None else None
            if first is None or first.start() >= hold:
                cut = hold - base
                out.append(self._pending[:cut])
                self._advance(self._pending[:cut])
                self._pending = self._pending[cut:]
                break
            if not final and (first.end() >= len(full) or first.end() > hold):
                # its right boundary (a longer surrogate, a plural ending) is not known yet
                out.append(full[base:first.start()])
                self._advance(full[base:first.start()])
                self._pending = full[first.start():]
                break
            b = self._block_end(full, first.end())
            blank = b is not None
            if b is None and not final:
                early = self._early(full, base, first)
                if early is not None:
                    out.append(early)
                    continue
                out.append(full[base:first.start()])
                self._advance(full[base:first.start()])
                self._pending = full[first.start():]
                break
            if b is None:
                b = len(full)
            out.append(self._decide(full, base, b, list(self._pattern.finditer(full, base, b)), blank))
            self._pending = full[b:]
        return "".join(out)

    def feed(self, chunk: str) -> str:
        """Take the next piece of the answer; return what can be emitted without risk."""
        if not chunk:
            return ""
        self._pending += chunk
        if self._pattern is None:
            out, self._pending = self._pending, ""
            return out
        return self._process(final=False)

    def flush_text(self, text: str) -> str:
        """``feed(text) + flush()`` in one go (the one-pass restoration)."""
        self._pending += text
        if self._pattern is None:
            out, self._pending = self._pending, ""
            return out
        return self._process(final=True)

    def flush(self) -> str:
        """End of the field: restore and return everything still held back."""
        if not self._pending:
            return ""
        if self._pattern is None:
            out, self._pending = self._pending, ""
            return out
        return self._process(final=True)
