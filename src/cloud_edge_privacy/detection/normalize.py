"""The text as a reader reads it: normalisation before detection, with offsets mapped back to the original.

A value can be written so that it reads normally but escapes a detector that reads code points: fullwidth
or other compatibility forms (``ｍａｒｇａｒｅｔ＠ｅｘａｍｐｌｅ.com``), HTML character references
(``margaret.thornton&#64;example.com``), percent-encoding (``margaret%40example.com``) and backslash escapes
of punctuation (a regex ``pattern`` such as ``margaret\\.thornton@example\\.com``).  :func:`normalize`
returns the decoded text and a map back, so spans found in the decoded text cover the whole encoded
surface in the original (the operator then replaces all of it).
"""
from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass
from typing import List, Sequence, Tuple

from ..spans import Span

# Pieces that read differently from how they are written; anything else is copied as it is.
_ENCODED = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});"
                      r"|(?:%[0-9A-Fa-f]{2})+"
                      r"|\\[!-/:-@\[-`{-~]"
                      r"|[^\x00-\x7f]+")


@dataclass(frozen=True)
class Normalized:
    """``text`` as read; ``pieces``: (start in text, end in text, start in original, end in original) of
    every rewritten piece, in order (the text between pieces is unchanged)."""

    original: str
    text: str
    pieces: Tuple[Tuple[int, int, int, int], ...]

    @property
    def changed(self) -> bool:
        return bool(self.pieces)

    def to_original(self, pos: int, end: bool) -> int:
        """The original offset of a position in the normalised text (a start maps to the start of the piece
        it falls in, an end to the end of it)."""
        shift = 0
        for ns, ne, os_, oe in self.pieces:
            if pos < ns or (end and pos == ns):
                break
            if pos < ne or (end and pos == ne):
                return oe if end else os_
            shift = oe - ne
        return pos + shift

    def spans_to_original(self, spans: Sequence[Span]) -> List[Span]:
        out = []
        for s in spans:
            a, b = self.to_original(s.start, False), self.to_original(s.end, True)
            if a < b:
                out.append(Span(a, b, s.category, s.score, s.source))
        return out


def _decode(piece: str) -> str:
    if piece.startswith("&"):
        return html.unescape(piece)
    if piece.startswith("%"):
        raw = bytes(int(piece[i + 1:i + 3], 16) for i in range(0, len(piece), 3))
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return piece
        return text if text.isprintable() else piece
    if piece.startswith("\\"):
        return piece[1:]
    return unicodedata.normalize("NFKC", piece)


def normalize(text: str) -> Normalized:
    """Decode ``text`` as a reader (or a browser) reads it; see the module docstring."""
    if text.isascii() and "&" not in text and "%" not in text and "\\" not in text:
        return Normalized(text, text, ())
    out: List[str] = []
    pieces: List[Tuple[int, int, int, int]] = []
    pos = npos = 0
    for m in _ENCODED.finditer(text):
        piece = m.group()
        if not piece.isascii():
            if unicodedata.normalize("NFKC", piece) == piece:
                continue
            parts = [(m.start() + i, c) for i, c in enumerate(piece)]  # one character at a time: exact offsets
        else:
            parts = [(m.start(), piece)]
        for start, part in parts:
            new = _decode(part)
            if new == part:
                continue
            out.append(text[pos:start])
            npos += start - pos
            out.append(new)
            pieces.append((npos, npos + len(new), start, start + len(part)))
            npos += len(new)
            pos = start + len(part)
    if not pieces:
        return Normalized(text, text, ())
    out.append(text[pos:])
    return Normalized(text, "".join(out), tuple(pieces))
