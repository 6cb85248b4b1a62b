"""The one span type used everywhere: detection output, operator input, metric input."""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any, Dict, Pattern, Tuple

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


def non_space_run(text: str, start: int, end: int) -> Tuple[int, int]:
    """The run of non-space characters of ``text`` around ``[start, end)``: the whole URL, path or e-mail a word is
    part of."""
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    while end < len(text) and not text[end].isspace():
        end += 1
    return start, end
