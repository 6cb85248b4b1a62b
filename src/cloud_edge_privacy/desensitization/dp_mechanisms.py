"""Formal (local) differential privacy on detected values (docs/design.md invariant 5).

Each mechanism states its :class:`PrivacyMap` in one place, the ``*_map`` function next to it; every
randomized release returns a :class:`PrivacyCharge` built from that map.  The mechanism, its domain, Δ and ε
are chosen from public information only: the span's category, the *template* of the span (its words and
the positions of its numbers and month names, never the digits or the month) and the text around the span
(which is sent in clear anyway).  The private value is clamped into the public domain, never released.

* ``dp_numbers``: every number of a date, an age or an amount gets Laplace (or Gaussian) noise over a public
  domain; month names and numeric months get k-ary randomized response over the 12 months.  ε is per released
  value (one span), split equally over its parts, and charged part by part.  A span whose template is not
  understood (words outside a public vocabulary, clock times, spelled-out numbers) becomes a placeholder.
* ``metric_dp_words``: d_χ-privacy word replacement (Feyisetan et al. 2020): noise with density ∝ exp(-ε‖z‖)
  on the word's embedding, nearest vocabulary word released.  Words without an embedding start from the
  ``[UNK]`` vector (a public, value-independent pre-processing), so every word gets the same mechanism.
* ``prism_ldp``: PRISM's two-layer randomized response: k-RR over the 8 TAB categories with ε1, then k-RR over
  the public value domain of the released category with ε2 (ε1 + ε2 = ε).

Randomness: ``rand.noise_random_state`` / ``rand.noise_rng`` with a context of (method, scope, value index,
part) only: never the text or the value.  In deployment mode that is the OS CSPRNG.
"""
from __future__ import annotations

import calendar
import functools
import math
import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Dict, List, Literal, Mapping, Optional, Sequence, Tuple

import numpy as np
from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from ..randomness import Randomness
from ..spans import Span
from ..vocabulary import TAB_CATEGORIES
from .base import (APPROXIMATE, METRIC, PURE, Desensitized, PrivacyCharge, PrivacyMap, apply_replacements,
                   register_operator)
from .gazetteer import _COUNTRIES, country_of
from .restore import OnePassRestorer
from .surrogates import FIRST_NAMES, LAST_NAMES, MONTHS, NATIONALITIES, ORGANISATIONS

# diffprivlib's analytic-Gaussian calibration overflows (exp(ε)) far above this.
GAUSSIAN_MAX_EPSILON = 100.0
NEIGHBOURS_NOTE = ("the document's distinct values: one distinct value (all its mentions) replaced by another "
                   "of the same template, not already in the document")


# -- parameter validation ------------------------------------------------------------------------------

def check_epsilon(value: Any, name: str = "epsilon") -> float:
    """A finite ε > 0, or a ``ValueError`` saying why not (inf, nan, 0 and negatives are refused)."""
    try:
        eps = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if math.isnan(eps) or math.isinf(eps):
        raise ValueError(f"{name} must be finite, got {value!r} (an infinite epsilon would release values unchanged)")
    if eps <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return eps


class _Budgeted(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @field_validator("epsilon", "max_document_epsilon", check_fields=False, mode="before")
    @classmethod
    def _eps(cls, v: Any, info: Any) -> Any:
        return None if v is None else check_epsilon(v, info.field_name)


# -- privacy maps (one per mechanism) --------------------------------------------------------------------

@dataclass(frozen=True)
class NumericAttribute:
    """A kind of number with a public domain [lo, hi] (sensitivity Δ = hi - lo)."""

    name: str
    lo: float
    hi: float
    log_scale: bool = False   # amounts are noised as log10(value)
    integer: bool = True

    @property
    def sensitivity(self) -> float:
        return self.hi - self.lo

    def describe(self) -> str:
        unit = "log10 of the value" if self.log_scale else "value"
        return f"{self.name} ({unit} in [{self.lo:g}, {self.hi:g}], Δ = {self.sensitivity:g})"


ATTRIBUTES: Mapping[str, NumericAttribute] = MappingProxyType({
    "year": NumericAttribute("year", 1900, 2030),
    "day": NumericAttribute("day", 1, 31),
    "age": NumericAttribute("age", 0, 120),
    "duration": NumericAttribute("duration", 0, 100),
    "percent": NumericAttribute("percent", 0, 100, integer=False),
    "count": NumericAttribute("count", 0, 1000),
    "amount": NumericAttribute("amount", 0, 9, log_scale=True, integer=False),   # 1 .. 10^9
})


def laplace_map(epsilon: float, attr: NumericAttribute) -> PrivacyMap:
    """Laplace(Δ/ε) on a value clamped to the attribute's domain: pure ε-DP for any two values of it."""
    return PrivacyMap("laplace", PURE, float(epsilon), 0.0,
                      f"any two values of {attr.describe()}; {NEIGHBOURS_NOTE}",
                      f"one {attr.name} of one span (values outside the domain are clamped into it)")


def gaussian_map(epsilon: float, delta: float, attr: NumericAttribute) -> PrivacyMap:
    """Analytic Gaussian (Balle & Wang 2018) on a clamped value: (ε, δ)-DP for any two values of it."""
    return PrivacyMap("gaussian (analytic)", APPROXIMATE, float(epsilon), float(delta),
                      f"any two values of {attr.describe()}; {NEIGHBOURS_NOTE}",
                      f"one {attr.name} of one span (values outside the domain are clamped into it)")


def krr_map(epsilon: float, k: int, domain_name: str, protects: str) -> PrivacyMap:
    """k-ary randomized response: keep with e^ε/(e^ε+k-1), else uniform among the others: pure ε-DP."""
    return PrivacyMap(f"k-ary randomized response (k={k})", PURE, float(epsilon), 0.0,
                      f"any two elements of {domain_name}; {NEIGHBOURS_NOTE}", protects)


def metric_word_map(epsilon: float, embedding: str) -> PrivacyMap:
    """d_χ-privacy: P[y|x] <= e^(ε·d(x,x')) P[y|x'], d = Euclidean distance of the words' embeddings."""
    return PrivacyMap("multivariate Laplace on word embeddings + nearest word", METRIC, float(epsilon), 0.0,
                      f"two words at distance d in {embedding} (words without an embedding count as [UNK]): "
                      f"the bound is e^(ε·d); the number of words of each span is not protected",
                      "one distinct word of the document")


def k_rr(true: Any, domain: Sequence[Any], epsilon: float, rng: np.random.Generator) -> Any:
    """k-ary randomized response over ``domain`` (``true`` must be in it); see :func:`krr_map`."""
    k = len(domain)
    if true not in domain:
        raise ValueError("the true value is not in the domain (map it into the domain first)")
    # keep with probability e^ε/(e^ε + k - 1), written to avoid overflowing exp for large ε
    p_keep = 1.0 / (1.0 + (k - 1) * math.exp(-epsilon))
    if rng.random() < p_keep:
        return true
    others = [d for d in domain if d != true]
    return others[int(rng.integers(len(others)))]


def _noise_number(x: float, attr: NumericAttribute, eps: float, gaussian: bool, delta: float,
                  random_state: Optional[int]) -> Tuple[float, PrivacyMap]:
    """Clamp ``x`` to the attribute's domain, add calibrated noise, clamp again (post-processing)."""
    from diffprivlib.mechanisms import GaussianAnalytic, Laplace

    x = min(max(x, attr.lo), attr.hi)
    if gaussian:
        mech = GaussianAnalytic(epsilon=eps, delta=delta, sensitivity=attr.sensitivity, random_state=random_state)
        pmap = gaussian_map(eps, delta, attr)
    else:
        mech = Laplace(epsilon=eps, sensitivity=attr.sensitivity, random_state=random_state)
        pmap = laplace_map(eps, attr)
    return min(max(float(mech.randomise(x)), attr.lo), attr.hi), pmap


# -- templates: which parts of a span are released by which mechanism --------------------------------

_MONTH_ABBR: Mapping[str, int] = MappingProxyType({**{m[:3].lower(): i for i, m in enumerate(MONTHS)}, "sept": 8})
_MONTH_NAMES: Mapping[str, int] = MappingProxyType({m.lower(): i for i, m in enumerate(MONTHS)})
_UNITS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
          "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
_TENS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
# spelled-out numbers ("five", "sixty-three"): read as numbers like digits, released as digits
_WORD_NUM = (r"(?:" + "|".join(_TENS) + r")(?:[ -](?:" + "|".join(_UNITS[1:10]) + r"))?"
             r"|(?:" + "|".join(sorted(_UNITS, key=len, reverse=True)) + r")")
_TOKEN = re.compile(
    r"(?P<num>\d+(?:[.,]\d+)*|(?i:" + _WORD_NUM + r"))(?P<suffix>st|nd|rd|th|s)?(?![A-Za-z\d])"
    r"|(?P<word>[A-Za-z]+\.?)"
    r"|(?P<other>[^\dA-Za-z]+)"
    r"|(?P<bad>.)", re.S)
_DATE_TOKEN = re.compile(   # in dates a dot or comma separates numbers ("15.03.1998", "May 3,1998")
    r"(?P<num>\d+|(?i:" + _WORD_NUM + r"))(?P<suffix>st|nd|rd|th|s)?(?![A-Za-z\d])"
    r"|(?P<word>[A-Za-z]+\.?)"
    r"|(?P<other>[^\dA-Za-z]+)"
    r"|(?P<bad>.)", re.S)
CURRENCIES = frozenset({
    "eur", "euro", "euros", "usd", "dollar", "dollars", "gbp", "pound", "pounds", "sterling", "chf", "franc",
    "francs", "dem", "mark", "marks", "deutschmark", "deutschmarks", "frf", "itl", "lira", "lire", "try",
    "trl", "rub", "rouble", "roubles", "ruble", "rubles", "pln", "zloty", "zlotys", "zlotych", "uah",
    "hryvnia", "hryvnias", "hryvnas", "huf", "forint", "forints", "czk", "koruna", "korunas", "sk", "skk",
    "hrk", "kuna", "kunas", "bgn", "lev", "leva", "ron", "rol", "lei", "leu", "sit", "tolar", "tolars",
    "mkd", "denar", "denars", "ltl", "litas", "litai", "lvl", "lats", "eek", "kroon", "kroons", "sek",
    "nok", "dkk", "krona", "kronor", "krone", "kroner", "ats", "schilling", "schillings", "grd", "drachma",
    "drachmas", "esp", "peseta", "pesetas", "pte", "escudo", "escudos", "amd", "dram", "drams", "azn",
    "manat", "manats", "gel", "lari", "mdl", "bam", "rsd", "dinar", "dinars", "all", "lek", "cents", "cent",
    "kopecks", "kopeks",
})
_CURRENCY_SYMBOLS = "€$£¥"
MULTIPLIERS: Mapping[str, float] = MappingProxyType(
    {"thousand": 1e3, "million": 1e6, "millions": 1e6, "billion": 1e9, "m": 1e6, "bn": 1e9})
DURATION_UNITS = frozenset({"year", "years", "month", "months", "week", "weeks", "day", "days", "hour", "hours",
                            "minute", "minutes"})
AGE_WORDS = frozenset({"aged", "age", "ages", "old", "year", "years", "yr", "yrs", "born"})
# Words a released span may keep: public, value-free connectors and units.  Any other word -> placeholder.
# Words a released span may keep: public connectors, approximations and units that carry nothing of the value
# beyond what is noised.  Any other word ("late", "first half of", "Christmas", a street) -> placeholder.
CURRENCY_ADJECTIVES = frozenset({"turkish", "swedish", "norwegian", "danish", "czech", "slovak", "slovakian", "polish",
                       "hungarian", "russian", "ukrainian", "romanian", "bulgarian", "croatian", "serbian",
                       "swiss", "french", "german", "italian", "spanish", "portuguese", "austrian", "greek",
                       "british", "us", "american", "moldovan", "georgian", "armenian", "azerbaijani",
                       "lithuanian", "latvian", "estonian", "slovenian", "macedonian", "albanian", "bosnian"})
TEMPLATE_WORDS = frozenset(
    {"the", "a", "an", "of", "in", "on", "at", "by", "from", "to", "until", "till", "between", "and", "or",
     "around", "about", "approximately", "approx", "circa", "c", "some", "per", "cent", "percent", "total",
     "sum", "amount", "amounts", "km", "kilometres", "kilometers", "metres", "meters", "m", "kg", "kilograms",
     "tonnes", "hectares", "ha", "square", "sq", "litres", "people", "persons", "children", "thousand",
     "million", "millions", "billion", "bn", "liras", "kronor"}
    | CURRENCIES | DURATION_UNITS | AGE_WORDS)
_DAYS_IN_MONTH = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


@dataclass
class _Tok:
    kind: str     # num | month | word | other
    text: str
    suffix: str = ""
    start: int = 0


def _tokens(surface: str, category: str = "") -> List[_Tok]:
    """Split a span into numbers, month names, words and punctuation (``bad`` for anything else)."""
    out: List[_Tok] = []
    for m in (_DATE_TOKEN if category == "DATETIME" else _TOKEN).finditer(surface):
        if m.group("num") is not None:
            out.append(_Tok("num", m.group("num"), m.group("suffix") or "", m.start()))
        elif m.group("word") is not None:
            w = m.group("word")
            low = w.lower().rstrip(".")
            out.append(_Tok("month" if low in _MONTH_NAMES or low in _MONTH_ABBR else "word", w, "", m.start()))
        elif m.group("other") is not None:
            out.append(_Tok("other", m.group("other"), "", m.start()))
        else:
            out.append(_Tok("bad", m.group(), "", m.start()))
    return out


def _month_index(tok: _Tok) -> int:
    low = tok.text.lower().rstrip(".")
    return _MONTH_NAMES[low] if low in _MONTH_NAMES else _MONTH_ABBR[low]


def _significant(tokens: List[_Tok], i: int, step: int) -> Optional[int]:
    """Index of the nearest num/month/word token from ``i`` in direction ``step``, skipping spaces, commas
    and the connectors "of"/"the"."""
    j = i + step
    while 0 <= j < len(tokens):
        t = tokens[j]
        if t.kind in ("num", "month"):
            return j
        if t.kind == "word" and t.text.lower() not in ("of", "the"):
            return j
        if t.kind == "other" and t.text.strip() not in ("", ","):
            return j
        j += step
    return None


def _near_words(context: str) -> set:
    return {w.lower() for w in re.findall(r"[A-Za-z]+", context)}


def assign_roles(category: str, surface: str, before: str = "", after: str = "") -> Optional[List[Tuple[int, str]]]:
    """(token index, role) for every number and month of the span, from the template and the context only.

    Roles: an attribute name of :data:`ATTRIBUTES`, ``"month"`` (month name, k-RR) or ``"month_number"``.
    ``None`` when the template is not understood: the caller must then suppress the span.  Digits and month
    identities are never read here (only the *kind* of each token), so the choice does not depend on the value.
    """
    if category not in ("DATETIME", "DEM", "QUANTITY"):
        return None
    toks = _tokens(surface, category)
    if not any(t.kind in ("num", "month") for t in toks) or any(t.kind == "bad" for t in toks):
        return None
    if category == "DATETIME" and re.search(r"(?<![A-Za-z])[ap]\.?m\b", surface, re.I):
        return None   # clock times are not handled
    allowed = TEMPLATE_WORDS | (CURRENCY_ADJECTIVES if category == "QUANTITY" else set())
    for t in toks:
        if t.kind == "word" and t.text.lower().rstrip(".") not in allowed:
            return None
        if t.kind == "other" and not re.fullmatch(r"[\s,./\-–()%" + _CURRENCY_SYMBOLS + r"]*", t.text):
            return None   # ":" (clock times) and other punctuation: not understood
    roles: List[Tuple[int, str]] = []
    if category == "DEM":
        return [(i, "month" if t.kind == "month" else "age") for i, t in enumerate(toks) if t.kind in ("num", "month")]
    if category == "QUANTITY":
        ctx = _near_words(before[-30:] + " " + surface + " " + after[:30])
        money = bool(ctx & CURRENCIES) or any(c in before[-30:] + surface + after[:30] for c in _CURRENCY_SYMBOLS)
        pct = "%" in surface or "%" in after[:2] or "percent" in ctx or ("per" in ctx and "cent" in ctx)
        attr = "amount" if money else "percent" if pct else "count"
        return [(i, "month" if t.kind == "month" else attr) for i, t in enumerate(toks) if t.kind in ("num", "month")]
    # DATETIME
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.kind == "month":
            roles.append((i, "month"))
            i += 1
            continue
        if t.kind != "num":
            i += 1
            continue
        # numeric date: num sep num sep num with one separator in / . - and no spaces
        if (i + 4 < len(toks) and toks[i + 2].kind == "num" and toks[i + 4].kind == "num"
                and toks[i + 1].text == toks[i + 3].text and toks[i + 1].text in ("/", ".", "-")):
            order = ("year", "month_number", "day") if toks[i + 1].text == "-" else ("day", "month_number", "year")
            roles.extend([(i, order[0]), (i + 2, order[1]), (i + 4, order[2])])
            i += 5
            continue
        nxt, prv = _significant(toks, i, 1), _significant(toks, i, -1)
        if t.suffix in ("st", "nd", "rd", "th") or (nxt is not None and toks[nxt].kind == "month"):
            roles.append((i, "day"))
        elif prv is not None and toks[prv].kind == "month" and nxt is not None and toks[nxt].kind == "num":
            roles.append((i, "day"))                      # "May 3, 1998"
        elif nxt is not None and toks[nxt].kind == "word" and toks[nxt].text.lower() in DURATION_UNITS:
            roles.append((i, "duration"))
        else:
            roles.append((i, "year"))                     # a lone number in a date; "the 1990s" is a decade
        i += 1
    return roles


def _parse_number(raw: str) -> float:
    """The numeric value of a digit run ("1,500.50", "1.500.000", "2,5"); any deterministic reading is fine:
    the value is clamped to the attribute's domain before the mechanism sees it."""
    words = raw.lower().replace("-", " ").split()
    if words and words[0].isalpha():
        return float(sum((_TENS.index(w) + 2) * 10 if w in _TENS else _UNITS.index(w) for w in words))
    s = raw
    if s.count(".") > 1:
        s = s.replace(".", "")
    if s.count(",") > 1 or ("," in s and "." in s):
        s = s.replace(",", "")
    elif "," in s:
        head, tail = s.split(",")
        s = head + ("." + tail if len(tail) != 3 else tail)
    return float(s)


def _ordinal(n: int) -> str:
    if 10 <= n % 100 <= 20:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def _render(attr: NumericAttribute, y: float, suffix: str) -> str:
    if attr.log_scale:
        v = 10 ** y
        digits = max(0, int(math.floor(math.log10(max(v, 1.0)))) - 1)   # two significant digits
        return f"{round(v, -digits):,.0f}"
    if not attr.integer:
        return f"{y:.1f}".rstrip("0").rstrip(".")
    n = int(round(y))
    if attr.name == "year" and suffix == "s":
        return f"{n // 10 * 10}s"
    if suffix in ("st", "nd", "rd", "th"):
        return f"{n}{_ordinal(n)}"
    return str(n)


# -- dp_numbers -------------------------------------------------------------------------------------

class DPNumbersParams(_Budgeted):
    """``epsilon``: ε per released value (a date, an age, an amount), split over its parts."""

    epsilon: float = 1.0
    mechanism: Literal["laplace", "gaussian"] = "laplace"
    delta: float = 1e-5
    max_document_epsilon: Optional[float] = None

    @model_validator(mode="after")
    def _gaussian(self) -> "DPNumbersParams":
        if self.mechanism == "gaussian":
            if not (math.isfinite(self.delta) and 0 < self.delta < 1):
                raise ValueError(f"the Gaussian mechanism needs delta in (0, 1), got {self.delta!r}")
            if self.epsilon > GAUSSIAN_MAX_EPSILON:
                raise ValueError(f"the Gaussian mechanism supports epsilon <= {GAUSSIAN_MAX_EPSILON}")
        return self


@register_operator("dp_numbers", params=DPNumbersParams, budgeted=True, randomized_release=True,
                   restores="placeholders")
class DPNumbers:
    """Noise every part of detected dates, ages and amounts; every other detected span gets a placeholder.

    ``max_document_epsilon`` (optional) caps the pure/approximate ε this operator spends on one document: a
    value whose release would exceed it becomes a placeholder (spends nothing).
    """

    name = "dp_numbers"
    # A randomized mechanism may release the true value by chance; the egress guard must not block on that.

    def __init__(self, **params: Any) -> None:
        self.params = DPNumbersParams(**params)
        self.gaussian = self.params.mechanism == "gaussian"

    def release(self, category: str, surface: str, before: str, after: str, rand: Randomness, scope: str,
                index: int) -> Tuple[Optional[str], List[PrivacyCharge]]:
        """The noised surface of one value and its charges, or (None, []) when it must be suppressed."""
        roles = assign_roles(category, surface, before, after)
        if not roles:
            return None, []
        toks = _tokens(surface, category)
        eps = self.params.epsilon / len(roles)
        money = any(r == "amount" for _, r in roles)
        charges: List[PrivacyCharge] = []
        month_of_span: Optional[int] = None
        for part, (i, role) in enumerate(roles):
            tok = toks[i]
            context = (self.name, scope, index, part)
            if role in ("month", "month_number"):
                if tok.kind == "month":
                    true = _month_index(tok)
                else:   # a numeric month, clamped into 1..12
                    true = min(max(int(_parse_number(tok.text)), 1), 12) - 1
                new = k_rr(true, list(range(12)), eps, rand.noise_rng(*context))
                month_of_span = new
                if role == "month_number":
                    tok.text = str(new + 1)
                else:
                    abbr = tok.text.lower().rstrip(".") not in _MONTH_NAMES
                    tok.text = (MONTHS[new][:3] if abbr else MONTHS[new]) + ("." if tok.text.endswith(".") else "")
                charges.append(PrivacyCharge(krr_map(eps, 12, "the 12 months", f"the month of one {category} span"),
                                             f"{category}:month"))
                continue
            attr = ATTRIBUTES[role]
            x = _parse_number(tok.text)
            if role == "year" and x < 100:
                x += 1900 if x > 30 else 2000
            if attr.log_scale:
                nxt = _significant(toks, i, 1)
                if nxt is not None and toks[nxt].kind == "word" and toks[nxt].text.lower() in MULTIPLIERS:
                    x *= MULTIPLIERS[toks[nxt].text.lower()]
                    toks[nxt].text = ""   # the multiplier is part of the value; the noised number is written in full
                x = math.log10(max(x, 1.0))
            y, pmap = _noise_number(x, attr, eps, self.gaussian, self.params.delta, rand.noise_random_state(*context))
            tok.text, tok.suffix = _render(attr, y, tok.suffix), ""
            charges.append(PrivacyCharge(pmap, f"{category}:{attr.name}"))
        days = [i for i, r in roles if r == "day"]
        if month_of_span is not None and len(days) == 1:   # post-processing: no "31 June", no "29 February 1900"
            tok = toks[days[0]]
            m = re.match(r"\d+", tok.text)
            n = _DAYS_IN_MONTH[month_of_span]
            years = [re.match(r"\d{1,4}", toks[i].text) for i, r in roles if r == "year"]
            if month_of_span == 1 and len(years) == 1 and years[0] and int(years[0].group()) >= 1:
                n = calendar.monthrange(int(years[0].group()), 2)[1]   # the released year's February
            if m and int(m.group()) > n:
                tok.text = f"{n}{_ordinal(n)}" if tok.text[m.end():] else str(n)
        text = "".join(t.text + t.suffix for t in toks)
        if money:
            text = re.sub(r"\s{2,}", " ", text)
        return text, charges

    def __call__(self, text: str, spans: Sequence[Span], rand: Randomness, scope: str = "") -> Desensitized:
        memo: Dict[Tuple[str, str], str] = {}
        counters: Dict[str, int] = {}
        charges: List[PrivacyCharge] = []
        spent = [0.0]
        restorer = OnePassRestorer()
        cap = self.params.max_document_epsilon

        def placeholder(span: Span, surface: str) -> str:
            counters[span.category] = counters.get(span.category, 0) + 1
            ph = f"[{span.category}_{counters[span.category]}]"
            restorer.add(ph, " ".join(surface.split()))
            return ph

        def replace(span: Span, surface: str) -> str:
            key = (span.category, " ".join(surface.split()).lower())
            if key in memo:
                return memo[key]
            new, cs = self.release(span.category, surface, text[max(0, span.start - 40):span.start],
                                   text[span.end:span.end + 40], rand, scope, len(memo))
            cost = sum(c.privacy_map.epsilon for c in cs)
            if new is None or (cap is not None and spent[0] + cost > cap + 1e-9):
                new = placeholder(span, surface)
            else:
                spent[0] += cost
                charges.extend(cs)
            memo[key] = new
            return new

        res = apply_replacements(text, spans, replace, self.name)
        res.charges = charges
        res.restorer = restorer
        res.vault = restorer.mapping
        return res


# -- metric DP on word embeddings -------------------------------------------------------------------

@dataclass(frozen=True)
class WordEmbeddings:
    """Static word vectors: the input embedding table of all-MiniLM-L6-v2, restricted to whole alphabetic
    wordpieces of 3+ letters, plus the ``[UNK]`` vector for words without an embedding.  Read-only.

    A release is drawn from the *output* words only: the table without personal names (any Faker locale's first
    or last names that are not function words), so a replacement never invents a person and a name seen in what was
    sent is never a coincidental release of another word.  The restriction is fixed before any data is seen and
    the nearest output word is a function of the noised vector alone, so the d_χ guarantee is unchanged."""

    words: Tuple[str, ...]
    index: Dict[str, int]
    vectors: np.ndarray
    sq_norms: np.ndarray
    unk: np.ndarray
    source: str
    output_rows: np.ndarray
    output_vectors: np.ndarray
    output_sq_norms: np.ndarray

    @staticmethod
    @functools.lru_cache(maxsize=1)
    def load() -> "WordEmbeddings":
        """Load once per process (public model data; the arrays are made read-only)."""
        from ..errors import ModelFileError
        from ..models.embeddings import minilm_dir

        d = minilm_dir()   # names the [bench] extra when the model package is missing
        try:
            from safetensors.numpy import load_file
        except ImportError as exc:
            raise ModelFileError("package safetensors is not installed: pip install 'cloud-edge-privacy[bench]' "
                                 "(scripts/setup.sh installs everything)") from exc
        vocab = (d / "vocab.txt").read_text(encoding="utf-8").split("\n")
        tensors = load_file(str(d / "model.safetensors"))
        key = next(k for k in tensors if k.endswith("word_embeddings.weight"))
        table = tensors[key].astype(np.float32)
        keep = [i for i, w in enumerate(vocab[: table.shape[0]]) if re.fullmatch(r"[a-z]{3,}", w)]
        vectors = table[keep]
        unk = table[vocab.index("[UNK]")].copy()
        sq = (vectors ** 2).sum(axis=1)
        for arr in (vectors, unk, sq):
            arr.setflags(write=False)
        words = tuple(vocab[i] for i in keep)
        from ..lexicon import function_words, known_names

        names = known_names() - function_words()
        output_rows = np.array([i for i, w in enumerate(words) if w not in names], dtype=np.int64)
        out_vectors, out_sq = vectors[output_rows], sq[output_rows]   # gathered once, not per release
        for arr in (output_rows, out_vectors, out_sq):
            arr.setflags(write=False)
        return WordEmbeddings(words, {w: i for i, w in enumerate(words)}, vectors, sq, unk,
                              f"all-MiniLM-L6-v2 input embeddings ({len(words)} words, dim {table.shape[1]}; "
                              f"{len(output_rows)} non-name words released)", output_rows, out_vectors, out_sq)

    def vector(self, word: str) -> np.ndarray:
        i = self.index.get(word.lower())
        return self.unk if i is None else self.vectors[i]


def metric_dp_noise(dim: int, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """Sample z with density ∝ exp(-ε‖z‖): uniform direction, ‖z‖ ~ Gamma(dim, 1/ε)."""
    direction = rng.normal(size=dim)
    direction /= np.linalg.norm(direction)
    return direction * rng.gamma(shape=dim, scale=1.0 / epsilon)


class MetricWordsParams(_Budgeted):
    epsilon: float = 10.0


# Direct identifiers (names, codes: e-mails, phones, account and ID numbers) get placeholders under
# metric_dp_words.  d_χ-privacy on one word releases the word itself with a probability that grows with its
# distance from other words, so a name or an e-mail part would sometimes leave in clear (seen in the leak check:
# "jones", "JOHN"); the guard cannot block such a release without conditioning the mechanism.
PLACEHOLDER_CATEGORIES = frozenset({"PERSON", "CODE"})


@register_operator("metric_dp_words", params=MetricWordsParams, budgeted=True, randomized_release=True)
class MetricDPWords:
    """Replace each word of a detected span by the vocabulary word nearest to its noised embedding.

    Spans of a direct-identifier category (``PLACEHOLDER_CATEGORIES``) get a numbered placeholder instead and
    spend no budget; the choice depends on the span's category only, which is public."""

    name = "metric_dp_words"
    # A randomized mechanism may release the true value by chance; the egress guard must not block on that.
    placeholder_categories = PLACEHOLDER_CATEGORIES

    def __init__(self, **params: Any) -> None:
        self.params = MetricWordsParams(**params)
        self.epsilon = self.params.epsilon
        self.emb = WordEmbeddings.load()

    def _release(self, words: List[str], rand: Randomness, scope: str) -> Dict[str, str]:
        """Noise every distinct word once, then one batched nearest-neighbour search."""
        if not words:
            return {}
        dim = self.emb.vectors.shape[1]
        noisy = np.stack([self.emb.vector(w) + metric_dp_noise(dim, self.epsilon, rand.noise_rng(self.name, scope, k))
                          for k, w in enumerate(words)])
        emb = self.emb
        nearest = emb.output_rows[np.argmin(emb.output_sq_norms[:, None] - 2.0 * (emb.output_vectors @ noisy.T), axis=0)]
        return {w: self.emb.words[int(j)] for w, j in zip(words, nearest)}

    def __call__(self, text: str, spans: Sequence[Span], rand: Randomness, scope: str = "") -> Desensitized:
        words: List[str] = []
        seen = set()
        for span in sorted(spans):
            if span.category in self.placeholder_categories:
                continue
            for tok in re.findall(r"\w+", text[span.start:span.end]):
                if tok.lower() not in seen:
                    seen.add(tok.lower())
                    words.append(tok.lower())
        released = self._release(words, rand, scope)
        pmap = metric_word_map(self.epsilon, self.emb.source)

        placeholders: Dict[Tuple[str, str], str] = {}

        def replace(span: Span, surface: str) -> str:
            if span.category in self.placeholder_categories:   # chosen by the public category, not the value
                key = (span.category, " ".join(surface.split()).lower())
                if key not in placeholders:
                    n = sum(1 for c, _ in placeholders if c == span.category) + 1
                    placeholders[key] = f"[{span.category}_{n}]"
                return placeholders[key]
            out = []
            for tok in re.findall(r"\w+|\W+", surface):
                if not tok[0].isalnum() and tok[0] != "_":
                    out.append(tok)
                    continue
                new = released[tok.lower()]
                out.append(new.capitalize() if tok[:1].isupper() else new)
            return "".join(out)

        res = apply_replacements(text, spans, replace, self.name)
        res.charges = [PrivacyCharge(pmap, "word") for _ in words]
        return res


@register_operator("selective_ldp", params=MetricWordsParams, budgeted=True, randomized_release=True)
class SelectiveMetricDP(MetricDPWords):
    """PRISM's "Selective LDP" baseline as the paper defines it: metric-DP replacement of the words of every
    detected span, names and codes included (so a name can leave in clear by chance; see metric_dp_words)."""

    name = "selective_ldp"
    placeholder_categories: frozenset = frozenset()

    def __call__(self, text: str, spans: Sequence[Span], rand: Randomness, scope: str = "") -> Desensitized:
        res = super().__call__(text, spans, rand, scope)
        res.method = self.name
        return res


@register_operator("uniform_ldp", params=MetricWordsParams, budgeted=True, randomized_release=True)
class UniformMetricDP(MetricDPWords):
    """PRISM's "Uniform LDP" baseline: metric-DP replacement of *every* word, detected or not."""

    name = "uniform_ldp"
    # A randomized mechanism may release the true value by chance; the egress guard must not block on that.
    placeholder_categories: frozenset = frozenset()

    def __call__(self, text: str, spans: Sequence[Span], rand: Randomness, scope: str = "") -> Desensitized:
        every_word = [Span(m.start(), m.end(), "WORD", 1.0, "uniform") for m in re.finditer(r"\w+", text)]
        res = super().__call__(text, every_word, rand, scope)
        res.method = self.name
        return res


# -- PRISM two-layer randomized response -------------------------------------------------------------

OTHER = "<other>"
# Direct identifiers that prism_ldp perturbs even when eq. 3 flags nothing (Δ = 0).
ALWAYS_PERTURBED = frozenset({"CODE"})
# Category sensitivity weights w_c in (0, 1] (PRISM eq. 6); configurable.
PRISM_WEIGHTS: Mapping[str, float] = MappingProxyType(
    {"PERSON": 0.9, "CODE": 0.95, "LOC": 0.4, "ORG": 0.5, "DATETIME": 0.3, "DEM": 0.7, "QUANTITY": 0.3, "MISC": 0.5})


def value_domains() -> Dict[str, List[str]]:
    """Explicit public value domains per category (OTHER is added by the operator)."""
    return {
        "PERSON": [f"{f} {l}" for f, l in zip(FIRST_NAMES, LAST_NAMES)],
        "CODE": [f"{n:05d}/{y % 100:02d}" for n, y in zip(range(10000, 90000, 2500), range(90, 122))],
        "LOC": sorted(_COUNTRIES),
        "ORG": list(ORGANISATIONS),
        "DATETIME": [str(y) for y in range(1950, 2026)],
        "DEM": list(NATIONALITIES),
        "QUANTITY": [f"about {10 ** k:,}" for k in range(0, 9)],
        "MISC": ["a profession", "an illness", "a religion", "a political opinion", "an event"],
    }


def map_to_domain(category: str, surface: str, domain: Sequence[str]) -> str:
    """Deterministic, public pre-processing of a value into its category's domain (or OTHER)."""
    if category == "DATETIME":
        years = re.findall(r"\b(19[5-9]\d|20[0-2]\d)\b", surface)
        return years[-1] if years and years[-1] in domain else OTHER
    if category == "LOC":
        c = country_of(surface)
        return c if c in domain else OTHER
    if category == "QUANTITY":
        m = re.search(r"\d[\d,]*(?:\.\d+)?", surface)
        if m:
            k = int(math.log10(max(float(m.group().replace(",", "")), 1.0)))
            cand = f"about {10 ** min(k, 8):,}"
            return cand if cand in domain else OTHER
        return OTHER
    return surface if surface in domain else OTHER


def split_budget(epsilon: float, weight: float, alpha: float) -> Tuple[float, float]:
    """PRISM eq. 6-7: ε1 = ε·w/(w + α(1-w)), ε2 = ε - ε1."""
    e1 = epsilon * weight / (weight + alpha * (1 - weight))
    return e1, epsilon - e1


class PrismParams(_Budgeted):
    epsilon: float = 2.0
    alpha: float = 0.5
    weights: Optional[Dict[str, float]] = None
    max_document_epsilon: Optional[float] = None
    # "context": PRISM eq. 3 as written (every entity perturbed iff Δ of eq. 2 is set, else none; the PRISM
    # example's setting); "all" (default): every detected entity perturbed whatever the context.
    entity_mask: Literal["context", "all"] = "all"

    @field_validator("alpha")
    @classmethod
    def _alpha(cls, v: float) -> float:
        if not (math.isfinite(v) and 0 < v <= 1):
            raise ValueError(f"alpha must be in (0, 1], got {v!r}")
        return v

    @field_validator("weights")
    @classmethod
    def _weights(cls, v: Optional[Dict[str, float]]) -> Optional[Dict[str, float]]:
        for k, w in (v or {}).items():
            if not (math.isfinite(w) and 0 < w < 1):
                raise ValueError(f"weight of {k} must be in (0, 1), got {w!r}")
        return v


@register_operator("prism_ldp", params=PrismParams, budgeted=True, randomized_release=True)
class PrismTwoLayerLDP:
    """PRISM's two-layer LDP over explicit public domains: ε per distinct value (ε1 category + ε2 value).

    Only the released value is sent (the released category is implied by it); OTHER is sent as a
    ``[CATEGORY]`` placeholder of the released category.  With ``entity_mask="context"`` (eq. 3) a prompt
    without a private cue (no first-person word, no PERSON entity: Δ = 0) has d = 0: its entities are
    released unchanged, as commonsense entities, with no DP claim and no ε charged (recorded as identity
    replacements, so the egress guard sees a deliberate release).  One floor of this project on top of the
    paper: CODE spans (cards, accounts, e-mails, phones, IDs) are perturbed even when Δ = 0.
    """

    name = "prism_ldp"
    # A randomized mechanism may release the true value by chance; the egress guard must not block on that.

    def __init__(self, **params: Any) -> None:
        self.params = PrismParams(**params)
        self.epsilon, self.alpha = self.params.epsilon, self.params.alpha
        self.weights = dict(PRISM_WEIGHTS, **(self.params.weights or {}))
        self.domains = {c: d + [OTHER] for c, d in value_domains().items()}

    def randomize(self, category: str, surface: str, rng: np.random.Generator) -> Tuple[str, str, List[PrivacyCharge]]:
        """(released category, released value, charges) for one value."""
        cat = category if category in TAB_CATEGORIES else "MISC"
        e1, e2 = split_budget(self.epsilon, self.weights.get(cat, 0.5), self.alpha)
        noisy_cat = k_rr(cat, TAB_CATEGORIES, e1, rng)
        dom = self.domains[noisy_cat]
        # If the category changed, the true value has no meaning in the new domain: start from OTHER.
        start = map_to_domain(cat, surface, dom) if noisy_cat == cat else OTHER
        value = k_rr(start, dom, e2, rng)
        charges = [PrivacyCharge(krr_map(e1, len(TAB_CATEGORIES), "the 8 TAB categories", "the category of one value"),
                                 f"{cat}:category"),
                   PrivacyCharge(krr_map(e2, len(dom), "the released category's public value domain (with OTHER)",
                                         "one value within its category's domain"), f"{cat}:value")]
        return noisy_cat, value, charges

    def __call__(self, text: str, spans: Sequence[Span], rand: Randomness, scope: str = "") -> Desensitized:
        from ..sensitivity import personal_context

        memo: Dict[Tuple[str, str], str] = {}
        charges: List[PrivacyCharge] = []
        cap = self.params.max_document_epsilon
        protect = self.params.entity_mask == "all" or personal_context(text, spans)  # d_i = Δ (eq. 3)

        def replace(span: Span, surface: str) -> str:
            if not protect and span.category not in ALWAYS_PERTURBED:
                return surface
            key = (span.category, " ".join(surface.split()).lower())
            if key not in memo:
                spent = sum(c.privacy_map.epsilon for c in charges)
                if cap is not None and spent + self.epsilon > cap + 1e-9:
                    memo[key] = f"[{span.category}]"
                else:
                    noisy_cat, value, cs = self.randomize(span.category, surface,
                                                          rand.noise_rng(self.name, scope, len(memo)))
                    charges.extend(cs)
                    memo[key] = f"[{noisy_cat}]" if value == OTHER else value
            return memo[key]

        res = apply_replacements(text, spans, replace, self.name)
        res.charges = charges
        return res
