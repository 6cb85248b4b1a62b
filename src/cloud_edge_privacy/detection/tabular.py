"""Cells of pasted tables: CSV/TSV/pipe-separated rows under a header that names what each column holds
("name,email,city", "Name | Phone | Address").  A cell is masked by its column, whatever it contains, so a
made-up town or an unusual name in a "city" or "name" column is found without any list."""
from __future__ import annotations

import re
from typing import Dict, List, Optional

from .. import wordlists
from ..spans import Span
from .recognizer import register_recognizer

# header word -> category; matched against the header cell with separators and case removed
_COLUMNS: Dict[str, str] = {word: category for category, name in (
    ("PERSON", "table_columns_person"), ("CODE", "table_columns_code"), ("LOC", "table_columns_loc"),
    ("DATETIME", "table_columns_datetime"), ("ORG", "table_columns_org"), ("DEM", "table_columns_dem"))
    for word in wordlists.entries(name)}
_DELIMITERS = ("\t", "|", ";", ",")
_KEY = re.compile(r"[\s_\-.#/]+")


def _header(line: str) -> Optional[tuple]:
    for d in _DELIMITERS:
        cells = [c.strip().strip("\"'`*") for c in line.strip().strip("|").split(d)]
        if len(cells) < 2:
            continue
        cats = [_COLUMNS.get(_KEY.sub("", c.lower())) for c in cells]
        # a header: every cell a short label, at least one a personal column
        if any(cats) and all(0 < len(c) <= 30 and not any(ch.isdigit() for ch in c) for c in cells):
            return d, cats
    return None


@register_recognizer("tabular", {"PERSON", "CODE", "LOC", "DATETIME", "ORG", "DEM"}, {"tabular": 1})
class TabularRecognizer:
    """Cells under a personal column ("name", "email", "phone", "city", "address", "dob", "iban", "user"...,
    in several languages) of delimited rows that follow such a header line."""

    def analyze(self, text: str) -> List[Span]:
        if not any(d in text for d in _DELIMITERS):
            return []
        out: List[Span] = []
        lines = [(m.start(), m.group()) for m in re.finditer(r"[^\n]+", text)]
        i = 0
        while i < len(lines):
            head = _header(lines[i][1])
            if head is None:
                i += 1
                continue
            delim, cats = head
            i += 1
            while i < len(lines):
                off, line = lines[i]
                if re.fullmatch(r"\s*\|?[\s:|-]+\|?\s*", line):  # markdown rule line
                    i += 1
                    continue
                parts = line.split(delim)
                if len(parts) != len(cats) + (2 if delim == "|" and line.strip().startswith("|") else 0):
                    break
                if delim == "|" and line.strip().startswith("|"):
                    parts = parts[1:-1]
                    off += line.index("|") + 1
                pos = off
                for cell, cat in zip(parts, cats):
                    value = cell.strip().strip("\"'")
                    start = text.find(value, pos) if cat and value else -1
                    if start >= 0:
                        out.append(Span(start, start + len(value), cat, 0.7, "tabular"))
                    pos += len(cell) + 1
                i += 1
        return out
