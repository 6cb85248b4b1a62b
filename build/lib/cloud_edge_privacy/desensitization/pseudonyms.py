"""Consistent, reversible pseudonyms with a vault, and their restoration in LLM answers."""
from __future__ import annotations

import re
from typing import Dict, List, Sequence, Tuple

from ..hashing import stable_hash
from ..spans import Span
from .base import Desensitized, apply_replacements, register_operator
from .surrogates import FIRST_NAMES, LAST_NAMES, MONTHS, NATIONALITIES, ORGANISATIONS, PLACES

_TITLES = {"mr", "mrs", "ms", "miss", "mme", "dr", "prof", "professor", "judge", "mr.", "mrs.", "ms.", "dr."}
_MONTH_RE = re.compile(r"\b(" + "|".join(MONTHS) + r")\b")


def _norm(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip().lower()


class PseudonymVault:
    """Maps each (category, value) to one surrogate and back.

    Surrogates are chosen by a keyed hash of (seed, category, value), so the same value gets the same
    surrogate in every document of a session, independent of processing order; collisions are probed
    away.  Person names are mapped token by token, so "Anna Berg" and a later "Berg" stay consistent.
    """

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.forward: Dict[Tuple[str, str], str] = {}
        self.backward: Dict[str, str] = {}
        self._used: Dict[str, set] = {}

    def _pick(self, pool: Sequence[str], kind: str, value: str) -> str:
        used = self._used.setdefault(kind, set())
        h = int(stable_hash([self.seed, kind, _norm(value)])[:12], 16)
        for probe in range(len(pool)):
            cand = pool[(h + probe) % len(pool)]
            if cand not in used:
                used.add(cand)
                return cand
        return f"{pool[h % len(pool)]}-{len(used)}"  # pool exhausted: still unique

    def _digits(self, value: str, letters: bool = True) -> str:
        """Format-preserving replacement: every digit (and letter, for codes) replaced, punctuation kept."""
        h = stable_hash([self.seed, "code", value])
        out, k = [], 0
        for ch in value:
            r = int(h[k % len(h)], 16)
            k += 1
            if ch.isdigit():
                out.append(str((int(ch) + 1 + r % 9) % 10))
            elif letters and ch.isalpha() and ch.isascii():
                base = "A" if ch.isupper() else "a"
                out.append(chr(ord(base) + (ord(ch.lower()) - 97 + 1 + r % 25) % 26))
            else:
                out.append(ch)
        return "".join(out)

    def _date(self, value: str) -> str:
        shift = int(stable_hash([self.seed, "year-shift"])[:4], 16) % 9 - 4 or 3
        out = re.sub(r"\b(1[89]\d{2}|20\d{2})\b", lambda m: str(int(m.group()) + shift), value)
        out = _MONTH_RE.sub(lambda m: MONTHS[(MONTHS.index(m.group()) + 5) % 12], out)
        return re.sub(r"\b([0-2]?\d|3[01])\b(?= (?:" + "|".join(MONTHS) + "))",
                      lambda m: str((int(m.group()) + 11) % 28 + 1), out)

    def _person(self, surface: str) -> str:
        tokens = surface.split()
        content = [t for t in tokens if _norm(t) not in _TITLES]
        out = []
        for t in tokens:
            if _norm(t) in _TITLES:
                out.append(t)
                continue
            key = ("PERSON_TOKEN", _norm(t))
            if key not in self.forward:
                if re.fullmatch(r"[A-Z]\.", t):
                    sur = self._digits(t[0]) + "."
                else:
                    is_last = t is content[-1] or len(content) == 1
                    sur = self._pick(LAST_NAMES if is_last else FIRST_NAMES, "last" if is_last else "first", t)
                self.forward[key] = sur
                self.backward.setdefault(sur, t)
            out.append(self.forward[key])
        return " ".join(out)

    def surrogate(self, category: str, surface: str) -> str:
        key = (category, _norm(surface))
        if key in self.forward:
            return self.forward[key]
        if category == "PERSON":
            sur = self._person(surface)
        elif category == "LOC":
            sur = self._pick(PLACES, "LOC", surface)
        elif category == "ORG":
            sur = self._pick(ORGANISATIONS, "ORG", surface)
        elif category == "DEM" and not any(c.isdigit() for c in surface):
            sur = self._pick(NATIONALITIES, "DEM", surface)
        elif category == "DATETIME":
            sur = self._date(surface)
        elif category == "CODE":
            sur = self._digits(surface)
        elif category in ("QUANTITY", "DEM"):
            sur = self._digits(surface, letters=False)  # "48,000 euros" -> "93,514 euros"
        else:
            sur = f"[{category}_{len([k for k in self.forward if k[0] == category]) + 1}]"
        if sur == surface:  # nothing replaceable (e.g. "seven years"): fall back to a typed placeholder
            sur = f"[{category}_{len([k for k in self.forward if k[0] == category]) + 1}]"
        self.forward[key] = sur
        self.backward.setdefault(sur, surface)
        return sur

    def restore(self, text: str) -> str:
        """Put originals back into a model's answer: case-insensitive, keeps possessive/plural suffixes."""
        for sur in sorted(self.backward, key=len, reverse=True):
            original = self.backward[sur]
            body = r"\s+".join(re.escape(t) for t in sur.split())
            pattern = re.compile(r"(?<!\w)" + body + r"(?=(?:'s|’s|s)?(?!\w))", re.IGNORECASE)

            def put(m: re.Match, original: str = original, sur: str = sur) -> str:
                shouted = m.group().isupper() and not sur.isupper() and len(m.group()) > 1
                return original.upper() if shouted else original

            text = pattern.sub(put, text)
        return text


@register_operator("pseudonym")
class ConsistentPseudonyms:
    """Replace each detected value by a realistic surrogate; reversible through the returned vault."""

    name = "pseudonym"

    def __init__(self, vault: PseudonymVault | None = None) -> None:
        self.vault = vault

    def __call__(self, text: str, spans: Sequence[Span], seed: int = 0) -> Desensitized:
        vault = self.vault or PseudonymVault(seed)
        out = apply_replacements(text, spans, lambda s, surface: vault.surrogate(s.category, surface), self.name)
        out.vault = dict(vault.backward)
        out.restorer = vault  # type: ignore[attr-defined]
        return out


def restore_answer(answer: str, result: Desensitized) -> str:
    """Restore pseudonyms of ``result`` in ``answer`` (no-op for irreversible methods)."""
    vault = getattr(result, "restorer", None)
    return vault.restore(answer) if vault is not None else answer


def surrogate_pairs(result: Desensitized) -> List[Tuple[str, str]]:
    return sorted(result.vault.items())
