"""Keyed, reversible pseudonyms (the ``pseudonym`` method) and their one-pass restoration on the edge.

How a surrogate is chosen (docs/design.md threat model: the adversary knows code, YAML and seed, not the key):

* **Keyed and stateless.**  Every choice is an HMAC under :class:`~cloud_edge_privacy.randomness.Randomness`'s
  key of (kind, normalized value, attempt): the same value gets the same surrogate in every document and every
  call under one key (a stateless proxy that re-protects a whole conversation per request sees the same
  surrogates), other keys give other surrogates, and in deployment mode nothing can be recomputed from the
  public seed.  Names, places and companies come from Faker seeded with the keyed integer; codes keep their
  format with every identifying letter and digit redrawn; dates move by a per-``scope`` keyed shift, and a
  duration, which has no date to move ("6 weeks"), gets its number redrawn like an amount.  A family
  name is keyed together with the given names it stands with in the text, so different people who share a
  surname ("John Smith", "Peter Smith" in two requests) get different surrogate surnames, and one family in
  the same text shares one.
* **Unique within a call.**  No two originals share a surrogate, and no surrogate equals (or contains a
  name token of) anything the document itself says: candidates that collide are rejected and the next keyed
  attempt is tried.  Values are settled in an order fixed by the key, so the outcome does not depend on the
  order of mentions.
* **Restorable.**  The result's restorer (:class:`~.restore.OnePassRestorer`) puts originals back in one pass,
  longest match first; person names are mapped token by token ("Anna Berg", "Berg", "Mr Berg", "Berg's",
  "BERG"), dates also when the model writes them in another common format, placeholders too.

Each call builds its own vault, so concurrent requests share nothing mutable but the (locked) Faker source.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple

import numpy as np
from pydantic import BaseModel, ConfigDict, field_validator

from ..randomness import Randomness
from ..spans import Span
from ..vocabulary import FOREIGN_TITLES, TITLES, tolerant_body
from .base import HEURISTIC, Desensitized, PrivacyMap, apply_replacements, register_operator
from .restore import OnePassRestorer, english_plural
from .surrogates import (DEFAULT_LOCALES, NameSource, code_surrogate, date_variants, day_month_variants,
                         keeps_piece, month_year_variants, number_surrogate, partial_variants, regenerate, shift_dates, shift_days)

_TITLES = TITLES | frozenset(FOREIGN_TITLES)
# a span of time with no date ("6 weeks", "3 years", "45 minutes")
_DURATION = re.compile(r"(?i)(\d{1,3}(?:[.,]\d)?)(\s?-?\s?)(seconds?|mins?|minutes?|hours?|hrs?|days?|weeks?|"
                       r"fortnights?|months?|years?|yrs?|decades?)")
# titles kept as they are; the others are written as their English equivalent (a "Herr" or "Sra" says where
# the person is from, and a kept word of the original would look like a leak to the egress guard)
_TITLE_AS = FOREIGN_TITLES
_PARTICLES = frozenset({"van", "von", "de", "der", "den", "da", "di", "del", "della", "dos", "das", "du", "la", "le",
              "bin", "ibn", "al", "el", "ter", "ten", "y", "zu"})
# words that say what kind of organisation or place something is; kept, and never counted as identifying
_ORG_SUFFIX_KINDS = ("Court", "Tribunal", "Bank", "Hospital", "Clinic", "Police", "Prison", "Council", "School",
                     "College", "Agency", "Office", "Institute", "Foundation", "Association", "Party", "Union",
                     "Commission", "Authority", "Service", "Board", "Committee", "Prosecutor's Office", "Church")
_ORG_PREFIX_KINDS = ("Ministry", "Department", "University", "Bank", "Office", "Court", "Institute", "Embassy",
                     "Municipality", "Republic")
# a postal code on its own: capitals, digits, one space or hyphen ("M14 5TP", "K1A 0B1", "90210", "1011 AB", "00-950")
_POSTCODE = re.compile(r"(?=[A-Z0-9 -]{3,10}$)(?=.*\d)[A-Z0-9]+(?:[ -][A-Z0-9]+)?")
_STREET_WORDS = re.compile(r"(?i)(?<!\w)(?:street|st\.|road|rd\.?|avenue|ave\.?|lane|square|boulevard|blvd|way|"
                           r"drive|place|ul\.|ulica|strasse|straße|gate|gata|gatan|vej|weg|rue|via|calle)(?!\w)")
_GENERIC = frozenset({
    "the", "of", "and", "for", "in", "on", "at", "a", "an", "de", "la", "le", "du", "des", "del", "der", "die",
    "das", "und", "et", "&", "co", "ltd", "inc", "plc", "gmbh", "ag", "sa", "as", "asa", "llc", "regional",
    "district", "supreme", "administrative", "constitutional", "high", "appeal", "appeals", "civil", "criminal",
    "national", "state", "federal", "city", "county", "public", "general", "central", "first", "second", "third",
    "instance", "street", "road", "avenue", "square", "prosecutor",
} | {w.lower() for k in _ORG_SUFFIX_KINDS + _ORG_PREFIX_KINDS for w in k.split()})
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")
_POSSESSIVE = re.compile(r"(?:['’]s|['’])$")
# What the method guarantees, stated next to it; it releases no DP charge (nothing here is randomized noise).
PSEUDONYM_PRIVACY = PrivacyMap(
    mechanism="keyed pseudonyms (HMAC-SHA256 choice of surrogates, keyed per-scope date shift)", kind=HEURISTIC,
    epsilon=0.0, neighbouring="none (deterministic under the key)",
    protects=("the values' surface forms against anyone without the key; not their format, their repetitions in "
              "a scope, or intervals between dates of one scope (one known true date reveals that scope's shift)"))
MAX_ATTEMPTS = 400
DATE_SHIFT_ATTEMPTS = 32
_CLASH_WEIGHT = {"full": 100, "month_year": 10, "day_month": 10}


def _is_name_token(s: str) -> bool:
    """One capitalized word of three letters or more ("Berg", "McKay", "Łukasz"), not an acronym."""
    return len(s) >= 3 and s.isalpha() and s[0].isupper() and not s.isupper()


def _norm(s: str) -> str:
    return " ".join(s.split()).lower()


def _code_norm(s: str) -> str:
    """A code's identity: letters and digits only, lower case ("DE89 3704" and "de893704" are one IBAN)."""
    return re.sub(r"[\W_]", "", s).lower() or _norm(s)


def _styled(word: str, like: str) -> str:
    """``word`` in the letter case of ``like``."""
    if like.isupper() and sum(c.isalpha() for c in like) > 1:
        return word.upper()
    if like.islower():
        return word.lower()
    return word


class PseudonymParams(BaseModel):
    """Parameters of the ``pseudonym`` method (unknown keys are errors)."""

    model_config = ConfigDict(extra="forbid")
    locales: List[str] = list(DEFAULT_LOCALES)  # Faker locales that names, places and companies come from
    ascii_only: bool = True                     # fold surrogates to ASCII (models copy them back faithfully)
    day_first: bool = True                      # how an ambiguous numeric date such as 03/05/1961 is read

    @field_validator("locales")
    @classmethod
    def _known_locales(cls, value: List[str]) -> List[str]:
        if not value:
            raise ValueError("give at least one Faker locale")
        try:
            from faker.config import AVAILABLE_LOCALES
        except ImportError:  # pragma: no cover - without Faker the invented pools are used
            return value
        unknown = [v for v in value if v not in AVAILABLE_LOCALES]
        if unknown:
            raise ValueError(f"unknown Faker locale(s) {unknown}")
        return value


@dataclass
class _Document:
    """What one document says, for rejecting candidates that would collide with it."""

    text_lower: str
    identifying: Set[str]  # name-like tokens of the originals (lower case)
    joined: str = ""  # the identifying tokens, one per line (one substring search for all of them)

    def __post_init__(self) -> None:
        self.joined = "\n".join(sorted(self.identifying))

    def holds_or_inside(self, token: str) -> bool:
        """Whether ``token`` (lower case, none of the identifying tokens itself) holds one of them or sits inside
        one, counting only words of 3 letters or more: "christopher" and "chris", "ann" and "annabel"."""
        if len(token) >= 3 and token in self.joined:
            return True
        return any(token[i:j] in self.identifying for i in range(len(token) - 2) for j in range(i + 3, len(token) + 1))

    @classmethod
    def of(cls, text: str, spans: Sequence[Span]) -> "_Document":
        identifying: Set[str] = set()
        for s in spans:
            if s.category in ("PERSON", "LOC", "ORG", "DEM", "MISC"):
                for w in _WORD.findall(text[s.start:s.end]):
                    w = _POSSESSIVE.sub("", w.lower())
                    if len(w) > 1 and w not in _GENERIC and w not in _TITLES and w not in _PARTICLES:
                        identifying.add(w)
        return cls(text.lower(), identifying)

    def says(self, candidate: str) -> bool:
        """Whether ``candidate`` occurs in the document (case-insensitive, on word boundaries)."""
        low = candidate.lower()
        if low not in self.text_lower:
            return False
        body = tolerant_body(low)
        return re.search(rf"(?<!\w){body}(?!\w)", self.text_lower) is not None


@dataclass
class PseudonymVault:
    """One call's assignments (kind, normalized value) -> surrogate, kept injective.

    ``assign`` settles a value: the keyed candidates ``make(attempt)`` for attempt = 0, 1, ... are tried until
    one is new in this vault, does not occur in the document and carries none of its name tokens.  Built and
    used by one call (no sharing, so no lock is needed); the choice of candidates is a pure function of the key.
    """

    doc: _Document
    forward: Dict[Tuple[str, str], str] = field(default_factory=dict)
    attempts: Dict[Tuple[str, str], int] = field(default_factory=dict)  # which keyed attempt was taken
    used: Set[str] = field(default_factory=set)
    person_tokens: Set[str] = field(default_factory=set)

    def acceptable(self, candidate: Optional[str], multiword_ok: bool, exact: bool) -> bool:
        if not candidate or candidate.lower() in self.used:
            return False
        if not multiword_ok and not _is_name_token(candidate):
            return False
        if self.doc.says(candidate):
            return False
        if not exact:  # names: no token of the document's names, none of our person surrogates inside
            tokens = {t.lower() for t in _WORD.findall(candidate)}
            if tokens & self.doc.identifying or (multiword_ok and tokens & self.person_tokens):
                return False
            # nor one inside the other: "Christopher" for "Chris" (or "Ann" for "Annabel") shows the original
            # (the kind words a surrogate keeps on purpose, "Court" beside a document's "courts", do not count)
            if any(self.doc.holds_or_inside(t) for t in tokens
                   if t not in _GENERIC and t not in _TITLES and t not in _PARTICLES):
                return False
        return True

    def assign(self, kind: str, norm: str, make: Callable[[int], Optional[str]], multiword_ok: bool = True,
               exact: bool = False, fallback: Optional[Callable[[], str]] = None) -> str:
        key = (kind, norm)
        if key in self.forward:
            return self.forward[key]
        chosen = None
        for attempt in range(MAX_ATTEMPTS):
            cand = make(attempt)
            if self.acceptable(cand, multiword_ok, exact):
                chosen = cand
                self.attempts[key] = attempt
                break
        if chosen is None:
            if fallback is None:
                raise RuntimeError(f"no unique surrogate found for a {kind} value")  # pragma: no cover
            chosen = fallback()
        self.forward[key] = chosen
        self.used.add(chosen.lower())
        if kind.startswith("PERSON"):
            self.person_tokens.add(chosen.lower())
        return chosen


@dataclass
class _PersonToken:
    """One token of a person span: its text, its role and where its replacement goes."""

    text: str
    kind: str  # "given", "family", "initial", or "keep" (titles, punctuation)
    core: str = ""
    suffix: str = ""


def _split_person(surface: str) -> List[List[_PersonToken]]:
    """The whitespace-separated words of a name, each split into hyphen parts with their kind (roles later)."""
    words = surface.split()
    out: List[List[_PersonToken]] = []
    for w in words:
        bare = w.rstrip(",;:")
        tail = w[len(bare):]
        title = bare.lower().rstrip(".")
        if title in _TITLES:
            out.append([_PersonToken(_TITLE_AS.get(title, bare) + tail, "keep")])
            continue
        if bare.islower() and bare in _PARTICLES:  # "van", "de la": left out (they hint at where one is from)
            continue
        if len(bare) > 2 and bare.endswith(".") and bare[:-1].isalpha():  # "Smith." at the end of a sentence
            bare, tail = bare[:-1], "." + tail
        poss = _POSSESSIVE.search(bare)
        core, suffix = (bare[:poss.start()], bare[poss.start():] + tail) if poss and len(bare) > 2 else (bare, tail)
        if re.fullmatch(r"[^\W\d_]\.?", core):
            out.append([_PersonToken(w, "initial", core, suffix)])
            continue
        parts = core.split("-")
        toks = [_PersonToken(p, "family", p, "") for p in parts if p]
        if not toks:
            out.append([_PersonToken(w, "keep")])
            continue
        toks[-1].suffix = suffix
        out.append(toks)
    return out


@register_operator("pseudonym", params=PseudonymParams, restores="surrogates")
class ConsistentPseudonyms:
    """Replace each detected value by a realistic keyed surrogate; reversible through the result's restorer.

    ``op(text, spans, rand, scope)``: surrogates are HMACs under ``rand``'s key (see the module docstring);
    dates are shifted by a number of days keyed by ``rand.digest("date-shift", scope)`` (``scope`` = document or
    conversation id), so intervals inside a scope are kept and the shift is unknown without the key.

    Reversibility across processes or requests needs a persistent key: the edge pipeline then builds its
    randomness with ``Randomness.deployment(require_key=True)``, which raises a ``ConfigError`` naming
    ``$CEP_SECRET_KEY`` when no key is set.  With a per-process key (``persistent_key`` false) surrogates are
    consistent, and restorable, only within this process.
    """

    name = "pseudonym"

    def __init__(self, locales: Sequence[str] = DEFAULT_LOCALES, ascii_only: bool = True,
                 day_first: bool = True) -> None:
        self.names = NameSource(locales, ascii_only)
        self.day_first = day_first

    # -- the call ---------------------------------------------------------------------------------------
    def __call__(self, text: str, spans: Sequence[Span], rand: Randomness, scope: str = "") -> Desensitized:
        doc = _Document.of(text, spans)
        vault = PseudonymVault(doc)
        surface = {s: text[s.start:s.end] for s in spans}
        people = {s: _split_person(surface[s]) for s in spans if s.category == "PERSON"}
        self._settle_people(people, vault, rand)
        others = [s for s in spans if s.category not in ("PERSON", "DATETIME")]
        settled: Dict[Span, Tuple[str, str]] = {}
        for s in sorted(others, key=lambda s: rand.digest("pseudonym-order", s.category, _norm(surface[s]))):
            settled[s] = self._settle_value(s.category, surface[s], vault, rand)
        dates = self._settle_dates([s for s in spans if s.category == "DATETIME"], surface, vault, rand, scope)

        primary: List[Tuple[str, str]] = []
        secondary: List[Tuple[str, str]] = []
        name_tokens: Set[str] = set()  # words of person surrogates (restored only where they stand alone)

        def replace(span: Span, original: str) -> str:
            if span.category == "PERSON":
                sur = self._render_person(people[span], vault, primary, name_tokens)
                if not sur.strip() or _norm(sur) == _norm(original):  # no name word ("the applicant"): a placeholder
                    sur = vault.assign("PERSON", _norm(original), _placeholder_maker("PERSON", _norm(original), rand),
                                       exact=True)
            elif span.category == "DATETIME":
                sur, parts = dates[_norm(original)]
                for p in parts:
                    if p.kind in ("full", "month_year", "day_month", "year"):
                        primary.append((p.surrogate, p.original))
                    secondary.extend(self._date_variants(p))
            else:
                key = settled[span]
                sur = vault.forward[key]
                if span.category == "CODE" and key in vault.attempts and sur != original:
                    # the same code written another way (spaces, case): same keyed draws, this layout
                    relaid = code_surrogate(original, rand.keyed_rng("pseudonym", "CODE", key[1], vault.attempts[key]))
                    sur = relaid if relaid != original and not keeps_piece(relaid, original) else sur
                if any(c.isdigit() for c in original) and key[0] in ("QUANTITY", "DEM"):
                    secondary.extend(_number_pairs(sur, original))
                elif key[0] in ("LOC", "ORG", "DEM") and not sur.startswith("["):
                    sur = _styled(sur, original)
                    secondary.append((sur.upper(), original.upper()))
            primary.append((sur, " ".join(original.split())))
            return sur

        out = apply_replacements(text, spans, replace, self.name)
        restorer, vault_map = _build_restorer(primary, secondary, text, name_tokens, self.names.is_given_name)
        out.restorer = restorer
        out.vault = vault_map
        return out

    # -- values other than names and dates ---------------------------------------------------------------
    def _settle_value(self, category: str, surface: str, vault: PseudonymVault,
                      rand: Randomness) -> Tuple[str, str]:
        """Give one value of a non-person, non-date span its surrogate; returns its vault key."""
        norm = _code_norm(surface) if category == "CODE" else _norm(surface)
        has_digits = any(c.isdigit() for c in surface)
        if category in ("QUANTITY", "DEM") and _STREET_WORDS.search(surface) and re.search(r"[A-Z][a-z]", surface):
            category = "LOC"  # a street address typed as a number: replace all of it, not only its digits

        def seed(attempt: int) -> int:
            return rand.keyed_int("pseudonym", category, norm, attempt, bits=63)

        def settle(make: Callable[[int], Optional[str]], exact: bool = False) -> Tuple[str, str]:
            placeholder = _placeholder_maker(category, norm, rand)
            vault.assign(category, norm, make, exact=exact, fallback=lambda: placeholder(MAX_ATTEMPTS))
            return category, norm

        def code(attempt: int) -> Optional[str]:
            cand = code_surrogate(surface, rand.keyed_rng("pseudonym", category, norm, attempt))
            return None if keeps_piece(cand, surface) else cand  # nothing of the original survives

        # a postcode alone is a code of its shape ("M14 5TP" -> "K82 9WD"), not a street ("28 AYAPAD")
        if category == "CODE" or category == "LOC" and _POSTCODE.fullmatch(surface.strip()):
            return settle(code, True)
        if category == "DEM" and has_digits and len(re.sub(r"[\d.,%]+", " ", surface).split()) > 3:
            # a long description around a number ("37 % of loss of sight"): the words are the secret
            return settle(_placeholder_maker(category, norm, rand), True)
        if category in ("QUANTITY", "DEM") and has_digits:
            return settle(lambda a: _changed(number_surrogate(surface, rand.keyed_rng(
                "pseudonym", category, norm, a)), surface), True)
        if category == "LOC":
            return settle(lambda a: self._place(surface, seed(a), a))
        if category == "ORG":
            return settle(lambda a: self._organisation(surface, seed(a), a))
        if category == "DEM" and surface[:1].isupper():  # "Swedish", "Turkish national": another nationality
            rest = surface.split()[1:]
            tail = " " + " ".join(rest) if rest and all(w.islower() for w in rest) else ""
            if not rest or tail:
                return settle(lambda a: (self.names.draw("nationality", seed(0), a) or "") + tail)
        return settle(_placeholder_maker(category, norm, rand), True)

    def _place(self, surface: str, seed: int, attempt: int) -> Optional[str]:
        body = re.sub(r"(?i)^the\s+", "", surface.strip())
        article = surface.strip()[: len(surface.strip()) - len(body)]
        if any(c.isdigit() for c in body) or _STREET_WORDS.search(body):
            street = self.names.draw("street", seed, attempt)
            if not street:
                return None
            number = ""
            if any(c.isdigit() for c in body):
                n = 1 + seed % 199
                number = str(n if str(n) not in re.findall(r"\d+", body) else n % 199 + 1)
            city = self.names.draw("city", seed ^ 0x5A5A, attempt) if "," in body else ""
            if "," in body and not city:
                return None
            return " ".join(x for x in (number, street) if x) + (f", {city}" if city else "")
        parts = [p.strip() for p in body.split(",")]
        out = []
        for i, part in enumerate(parts):  # "Wesel, Germany" -> another city, another country
            if not part:
                return None
            kind = "country" if self.names.is_country(part) else "city"
            value = self.names.draw(kind, seed ^ (0x5A5A * i), attempt)
            if not value:
                return None
            out.append(value)
        return ("" if self.names.is_country(parts[0]) else article) + ", ".join(out)

    def _organisation(self, surface: str, seed: int, attempt: int) -> Optional[str]:
        body = re.sub(r"(?i)^the\s+", "", surface.strip())
        article = surface.strip()[: len(surface.strip()) - len(body)]
        for kind in _ORG_PREFIX_KINDS:
            if re.match(rf"{kind}\s+of\b", body):
                place = self.names.draw("city", seed, attempt)
                return f"{article}{kind} of {place}" if place else None
        if re.fullmatch(r"[A-Z]{2,6}", body):  # an acronym: another acronym of the same length
            return article + regenerate(body, np.random.default_rng([seed, attempt]))
        for kind in _ORG_SUFFIX_KINDS:
            if re.search(rf"\b{re.escape(kind)}\b", body):
                place = self.names.draw("city", seed, attempt)
                return f"{article}{place} {kind}" if place else None
        value = self.names.draw("company", seed, attempt)
        return article + value if value else None

    # -- people ------------------------------------------------------------------------------------------
    def _settle_people(self, people: Dict[Span, List[List[_PersonToken]]], vault: PseudonymVault,
                       rand: Randomness) -> None:
        """Give every name token of the document one surrogate; a token is a given name when it stands before
        another name word somewhere in the document and never last, otherwise a family name."""
        given: Set[str] = set()
        family: Set[str] = set()
        for words in people.values():
            names = [w for w in words if w[0].kind in ("given", "family")]
            for i, w in enumerate(names):
                for t in w:
                    (family if i == len(names) - 1 else given).add(t.core.lower())
        for words in people.values():
            for w in words:
                for t in w:
                    if t.kind in ("given", "family"):
                        t.kind = "given" if t.core.lower() in given and t.core.lower() not in family else "family"
        todo = sorted({(t.kind, t.core.lower()) for ws in people.values() for w in ws for t in w
                       if t.kind in ("given", "family", "initial")},
                      key=lambda kn: rand.digest("pseudonym-order", "PERSON", kn[0], kn[1]))
        household = _households(people)
        for kind, norm in todo:
            if kind == "initial":
                vault.assign("PERSON:initial", norm, lambda a, n=norm: _initial(rand, n, a), multiword_ok=True,
                             exact=True, fallback=lambda n=norm: _initial(rand, n, MAX_ATTEMPTS))
                continue
            gender = self.names.gender_of(norm) if kind == "given" else None
            pool = "last" if kind == "family" else f"first_{gender}" if gender else "first"
            # a family name is keyed with the given names it stands with in this text, so "John Smith" and
            # "Peter Smith" of different texts get different surnames (the cloud cannot link them as kin);
            # people of one family in the same text share one
            who = household.get(norm, []) if kind == "family" else []

            def make(attempt: int, kind: str = kind, norm: str = norm, pool: str = pool,
                     who: List[str] = who) -> Optional[str]:
                parts = ("pseudonym", "PERSON", kind, norm) + ((tuple(who),) if who else ())
                return self.names.draw(pool, rand.keyed_int(*parts, bits=63), attempt)

            vault.assign(f"PERSON:{kind}", norm, make, multiword_ok=False)

    @staticmethod
    def _render_person(words: List[List[_PersonToken]], vault: PseudonymVault,
                       primary: List[Tuple[str, str]], name_tokens: Set[str]) -> str:
        out = []
        for w in words:
            if w[0].kind == "keep":
                out.append(w[0].text)
                continue
            if w[0].kind == "initial":
                t = w[0]
                letter = vault.forward[("PERSON:initial", t.core.lower())].rstrip(".")
                sur = letter + "." if t.core.endswith(".") else letter
                if t.core.endswith("."):
                    primary.append((sur, t.core))
                out.append(sur + t.suffix)
                continue
            pieces = []
            for t in w:
                sur = _styled(vault.forward[(f"PERSON:{t.kind}", t.core.lower())], t.core)
                name_tokens.add(sur.lower())
                if not sur.islower():  # a lone lower-case surrogate ("mark") could be an ordinary word
                    primary.append((sur, t.core))
                primary.append((sur.upper(), t.core.upper()))
                title = t.core if not t.core.isupper() else t.core.capitalize()
                primary.append((sur[:1].upper() + sur[1:].lower() if sur.isupper() or sur.islower() else sur, title))
                if t.kind == "family":
                    plural = _styled(vault.forward[("PERSON:family", t.core.lower())], title) + "s"
                    primary.append((plural, english_plural(title)))
                    name_tokens.add(plural.lower())
                pieces.append(sur + t.suffix)
            out.append("-".join(pieces))
        return " ".join(out)

    # -- dates -------------------------------------------------------------------------------------------
    def _settle_dates(self, spans: Sequence[Span], surface: Dict[Span, str], vault: PseudonymVault,
                      rand: Randomness, scope: str) -> Dict[str, Tuple[str, list]]:
        """One keyed shift per scope: among the first keyed shifts, the first whose surrogates say nothing the
        document already says (otherwise the one with the fewest such clashes, a whole date counting most), so a
        model's answer that repeats a genuine date of the document is not "restored" into another one."""
        distinct = sorted({_norm(surface[s]): surface[s] for s in spans}.items())
        best: Optional[Tuple[int, Dict[str, Tuple[str, list]]]] = None
        for attempt in range(DATE_SHIFT_ATTEMPTS):
            digest = rand.digest("date-shift", scope) if attempt == 0 else rand.digest("date-shift", scope, attempt)
            days, minutes = shift_days(digest), 1 + int.from_bytes(digest[4:6], "big") % 1438
            result: Dict[str, Tuple[str, list]] = {}
            clashes = 0
            for norm, orig in distinct:
                sur, parts = shift_dates(orig, days, minutes, self.day_first,
                                         rand.keyed_rng("date-digits", scope, norm, attempt))
                if not parts or _norm(sur) == norm:
                    result[norm] = (None, [])  # placeholder later
                    continue
                clashes += 100 * vault.doc.says(sur) + sum(_CLASH_WEIGHT.get(p.kind, 1) * vault.doc.says(p.surrogate)
                                                            for p in parts)
                result[norm] = (sur, parts)
            if best is None or clashes < best[0]:
                best = (clashes, result)
            if clashes == 0:
                break
        chosen = best[1] if best else {}
        originals = dict(distinct)
        for norm, (sur, parts) in list(chosen.items()):
            if sur is None and _DURATION.fullmatch(originals[norm].strip()):
                # a duration has no date to shift: its number is redrawn like an amount's ("over 5 years" -> "over
                # 7 years"), which a model can still reason with, where a placeholder says nothing
                orig = originals[norm]
                chosen[norm] = (vault.assign("DATETIME", norm, lambda a, o=orig, n=norm: _changed(_duration_surrogate(
                    o, rand.keyed_rng("pseudonym", "DATETIME", n, a)), o), exact=True,
                    fallback=lambda n=norm: _placeholder_maker("DATETIME", n, rand)(MAX_ATTEMPTS)), [])
            elif sur is None:
                chosen[norm] = (vault.assign("DATETIME", norm, _placeholder_maker("DATETIME", norm, rand),
                                             exact=True), [])
            else:
                vault.used.add(sur.lower())
        return chosen

    @staticmethod
    def _date_variants(part) -> List[Tuple[str, str]]:
        pairs: List[Tuple[str, str]] = []
        if part.kind == "full":
            pairs += [(v, part.original) for v in date_variants(part.sur_date)]
            pairs += partial_variants(part.sur_date, part.orig_date)
        elif part.kind == "month_year":
            pairs += [(v, part.original) for v in month_year_variants(part.sur_date)]
            pairs += partial_variants(part.sur_date, part.orig_date)
        elif part.kind == "day_month":
            pairs += [(v, part.original) for v in day_month_variants(part.sur_date)]
        return pairs


def _households(people: Dict[Span, List[List[_PersonToken]]]) -> Dict[str, List[str]]:
    """Family name (lower case) -> the given names it stands with anywhere in the text (sorted)."""
    out: Dict[str, Set[str]] = {}
    for words in people.values():
        names = [w for w in words if w[0].kind in ("given", "family")]
        if not names:
            continue
        givens = {t.core.lower() for w in names[:-1] for t in w if t.kind == "given"}
        for t in names[-1]:
            if t.kind == "family":
                out.setdefault(t.core.lower(), set()).update(givens)
    return {k: sorted(v) for k, v in out.items()}


def _changed(candidate: str, original: str) -> Optional[str]:
    return None if candidate == original else candidate


def _duration_surrogate(surface: str, rng: np.random.Generator) -> str:
    """A duration's number redrawn with its shape, and its unit singular after 1 ("6 weeks" -> "1 week")."""
    m = _DURATION.fullmatch(surface.strip())
    number = number_surrogate(m.group(1), rng)
    unit = m.group(3)
    if m.group(2).strip() != "-":  # "a 5-year loan" keeps its singular
        unit = unit[:-1] if number == "1" and unit.lower().endswith("s") else \
            unit if number == "1" or unit.lower().endswith("s") else unit + "s"
    return number + m.group(2) + unit


def _initial(rand: Randomness, norm: str, attempt: int) -> str:
    """A keyed initial ("K."): one letter for the first attempts, two once the alphabet is used up."""
    rng = rand.keyed_rng("pseudonym", "PERSON", "initial", norm, attempt)
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    first = letters[int(rng.integers(26))]
    return first + (letters[int(rng.integers(26))].lower() if attempt >= 52 else "") + "."


def _placeholder_maker(category: str, norm: str, rand: Randomness) -> Callable[[int], str]:
    """Keyed typed placeholders ``[MISC_4821]``: the same value gets the same one under one key."""

    def make(attempt: int) -> str:
        digits = 4 if attempt < 64 else 8
        number = rand.keyed_int("placeholder", category, norm, attempt, bits=40) % 10 ** digits
        return f"[{category}_{number:0{digits}d}]"

    return make


def _number_pairs(surrogate: str, original: str) -> List[Tuple[str, str]]:
    """(surrogate number, original number) for each number of a rewritten amount, also without separators."""
    s_nums = re.findall(r"\d+(?:[.,']\d+)*", surrogate)
    o_nums = re.findall(r"\d+(?:[.,']\d+)*", original)
    if len(s_nums) != len(o_nums):
        return []
    pairs = list(zip(s_nums, o_nums))
    pairs += [(re.sub(r"[,']", "", a), re.sub(r"[,']", "", b)) for a, b in pairs if re.search(r"[,']", a)]
    return [(a, b) for a, b in pairs if len(a) > 1]


def _build_restorer(primary: List[Tuple[str, str]], secondary: List[Tuple[str, str]],
                    text: str, name_tokens: Set[str],
                    given_name: Optional[Callable[[str], bool]] = None) -> Tuple[OnePassRestorer, Dict[str, str]]:
    """Exact surrogates first; then the other spellings, each only when it points to one original and does
    not occur in the original text (where it would be a genuine mention).  One word of a person surrogate
    is marked as a name token (not restored inside a foreign full name)."""
    restorer = OnePassRestorer(given_name=given_name)
    vault: Dict[str, str] = {}
    for sur, orig in primary:
        if sur and sur != orig and sur not in vault:
            vault[sur] = orig
            restorer.add(sur, orig, name_token=sur.lower() in name_tokens)
    targets: Dict[str, Set[str]] = {}
    for sur, orig in secondary:
        targets.setdefault(sur, set()).add(orig)
    doc = _Document(text.lower(), set())
    for sur, origs in targets.items():
        if len(origs) == 1 and sur not in vault and not doc.says(sur):
            restorer.add(sur, next(iter(origs)))
    return restorer, vault


def restore_answer(answer: str, result: Desensitized) -> str:
    """Restore pseudonyms and placeholders of ``result`` in ``answer`` (no-op for irreversible methods)."""
    return result.restore(answer)


def surrogate_pairs(result: Desensitized) -> List[Tuple[str, str]]:
    """(surrogate, original) pairs of a reversible result, sorted."""
    return sorted(result.vault.items())
