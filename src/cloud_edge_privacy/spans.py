"""The one span type used everywhere: detection output, operator input, metric input."""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any, Dict, List, Pattern, Tuple

from .vocabulary import tolerant_body


@dataclass(frozen=True, order=True)
class Span:
    """A character span ``[start, end)`` of a text with a category, a confidence and its source."""

    start: int
    end: int
    category: str
    score: float = 1.0
    source: str = ""

    def __post_init__(self) -> None:
        if self.start < 0 or self.end <= self.start:
            raise ValueError(f"invalid span offsets [{self.start}, {self.end})")

    def text(self, doc: str) -> str:
        return doc[self.start : self.end]

    @property
    def recognizer(self) -> str:
        """The family that found it: the source prefix its recognizer declares (``"structured"`` of
        ``"structured:email"``, ``"coref"`` of a propagated mention)."""
        return self.source.partition(":")[0]

    @property
    def label(self) -> str:
        """What the recognizer called it (``"email"`` of ``"structured:email"``, ``"PERSON"`` of
        ``"learned:PERSON"``); empty when the source has no label."""
        return self.source.partition(":")[2]

    def overlaps(self, other: "Span") -> bool:
        return self.start < other.end and other.start < self.end

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Span":
        """The inverse of :meth:`to_dict` (other keys are ignored)."""
        return cls(int(d["start"]), int(d["end"]), str(d["category"]), float(d.get("score", 1.0)),
                   str(d.get("source", "")))


SECRET_PREFIX = "secret:"  # source prefix of credentials (API keys, tokens, passwords, PINs)
SECRET_TOKEN = "[SECRET]"  # what every method writes in place of a credential


def is_secret(span: Span) -> bool:
    """Whether a span is a credential, which every privacy method suppresses (see ``apply_replacements``)."""
    return span.source.startswith(SECRET_PREFIX)


def surface_pattern(surface: str, flags: int = 0) -> Pattern[str]:
    """Regex for a surface form on word boundaries, tolerant of any run of whitespace inside it."""
    return re.compile(r"(?<!\w)" + tolerant_body(surface) + r"(?!\w)", flags)


# Characters that ``re.IGNORECASE`` matches to an ASCII letter, or whose ``str.lower`` is not one character (the
# dotted and dotless i, the long s and the Kelvin sign); in a text with none, ``str.lower`` is the regex's case
# folding for an ASCII surface and keeps every offset.
FOLDS_TO_ASCII = frozenset("\u0130\u0131\u017f\u212a")


def find_surface(text: str, surface: str, ignore_case: bool = False, digits: bool = False) -> List[Tuple[int, int]]:
    r"""The ``(start, end)`` of every match of :func:`surface_pattern` in ``text`` (left to right, not
    overlapping), found without compiling a pattern: co-reference and the egress guard look for each name of a
    prompt, and compiling one pattern per name was 5% of the gateway's time.  ``digits``: the edges are digits
    rather than word characters (the guard's ``(?<!\d)...(?!\d)``).

    Python's ``\s``, ``\w`` and ``\d`` are ``str.isspace``, ``str.isalnum`` (or ``_``) and ``str.isdecimal``, so a
    case-sensitive search is the pattern's on any text.  Ignoring case, an ASCII surface in a text without
    :data:`FOLDS_TO_ASCII` is searched in ``text.lower()``; any other goes through the pattern."""
    tokens = surface.split()
    if not tokens or ignore_case and not (surface.isascii() and FOLDS_TO_ASCII.isdisjoint(text)):
        edge_a, edge_b = (r"(?<!\d)", r"(?!\d)") if digits else (r"(?<!\w)", r"(?!\w)")
        pattern = re.compile(edge_a + tolerant_body(surface) + edge_b, re.IGNORECASE if ignore_case else 0)
        return [m.span() for m in pattern.finditer(text)]
    hay = text.lower() if ignore_case else text
    first, rest = (tokens[0].lower(), [t.lower() for t in tokens[1:]]) if ignore_case else (tokens[0], tokens[1:])
    edge = str.isdecimal if digits else (lambda c: c.isalnum() or c == "_")  # the regex's \d or \w
    out: List[Tuple[int, int]] = []
    n, pos = len(hay), 0
    while (i := hay.find(first, pos)) >= 0:
        end = i + len(first)
        if i == 0 or not edge(text[i - 1]):
            for tok in rest:
                k = end
                while k < n and text[k].isspace():
                    k += 1
                if k == end or not hay.startswith(tok, k):
                    end = -1
                    break
                end = k + len(tok)
            if end >= 0 and (end == n or not edge(text[end])):
                out.append((i, end))
                pos = end
                continue
        pos = i + 1
    return out


def non_space_run(text: str, start: int, end: int) -> Tuple[int, int]:
    """The run of non-space characters of ``text`` around ``[start, end)``: the whole URL, path or e-mail a word is
    part of."""
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    while end < len(text) and not text[end].isspace():
        end += 1
    return start, end
