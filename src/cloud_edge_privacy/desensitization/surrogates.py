"""Where keyed surrogates come from: names, places and companies (Faker, with invented ASCII fallbacks),
format-preserving codes and numbers, and per-document date shifts.

Every function here is a pure function of a keyed seed (an HMAC of the value under the edge's key, see
:class:`~cloud_edge_privacy.randomness.Randomness`) and the original's *format*; none of them looks at the
original's letters or digits beyond their class, so a surrogate tells nothing about the value it replaces
except its shape.  Choosing among candidates, uniqueness and restoration live in :mod:`.pseudonyms`.
"""
from __future__ import annotations

import datetime as dt
import re
import threading
import unicodedata
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import vocabulary

# -- invented pools (no value taken from TAB); dp_mechanisms draws from them too ---------------------------

FIRST_NAMES = [
    "Alma", "Bruno", "Clara", "Dario", "Elin", "Felix", "Greta", "Hugo", "Ines", "Jonas", "Kira", "Lorenz",
    "Mira", "Nils", "Olga", "Pavel", "Rosa", "Stefan", "Tilda", "Urs", "Vera", "Walter", "Yara", "Zeno",
    "Amira", "Boris", "Celia", "Emil", "Frida", "Goran", "Hanna", "Ivo", "Jana", "Karel", "Lena", "Marek",
]
LAST_NAMES = [
    "Aldana", "Brekke", "Castell", "Dorfman", "Eskola", "Fontaine", "Gruber", "Halloran", "Ivanic", "Jansen",
    "Kovar", "Lindqvist", "Moreau", "Novak", "Ostrowski", "Pellegrini", "Quist", "Rahman", "Sorensen",
    "Tamas", "Ulrich", "Valente", "Weiss", "Yilmazer", "Zeller", "Amrani", "Bergqvist", "Cerny", "Delacroix",
    "Engel", "Falk", "Horvath", "Kessler", "Marini", "Nyberg", "Petrov",
]
PLACES = [
    "Northbridge", "Eastholm", "Westvale", "Southport", "Marrow Bay", "Linden", "Ashford Hill", "Crestmoor",
    "Redfield", "Stonehaven", "Brightwater", "Oakridge", "Elmstead", "Fairhaven", "Greymouth", "Highcliff",
]
ORGANISATIONS = [
    "Meridian Holdings Ltd", "Harbor Logistics", "Northgate Clinic", "Silverline Bank", "Alder & Co.",
    "Crescent Media Group", "Summit Engineering", "Bluewater Trading", "Pinecrest School", "Orion Insurance",
    "Keystone Foods", "Lakeside Hospital", "Granite Works", "Beacon Press", "Riverside Council", "Atlas Freight",
]
NATIONALITIES = [
    "Arcadian", "Borovian", "Caldonian", "Dravish", "Estmarkish", "Felsian", "Galorian", "Hestrian",
]
MONTHS = list(vocabulary.MONTHS)
WEEKDAYS = list(vocabulary.WEEKDAYS)

DEFAULT_LOCALES = ("en_GB", "en_US", "de_DE", "fr_FR", "it_IT", "es_ES", "nl_NL", "sv_SE", "da_DK", "pl_PL")

_POOLS: Dict[str, Tuple[str, ...]] = {
    "first": tuple(FIRST_NAMES), "first_female": tuple(FIRST_NAMES), "first_male": tuple(FIRST_NAMES),
    "last": tuple(LAST_NAMES), "city": tuple(PLACES),
    "company": tuple(ORGANISATIONS), "nationality": tuple(NATIONALITIES), "country": tuple(PLACES),
    "street": (),
}
_FAKER_METHODS = {"first": "first_name", "first_female": "first_name_female", "first_male": "first_name_male",
                  "last": "last_name", "city": "city", "company": "company",
                  "country": "country", "street": "street_name"}
_ONSETS = ("b", "br", "d", "dr", "f", "g", "gr", "h", "k", "kl", "l", "m", "n", "p", "r", "s", "st", "t", "v",
           "w", "z")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ei", "au")
_CODAS = ("", "", "n", "r", "l", "s", "m", "nd", "rt", "k")
_INVENTED_SUFFIX = {"city": ("ford", "holm", "vale", "burg", "wick", "stad"), "company": (" Holdings", " Group",
                    " Partners", " Ltd", " Works"), "nationality": ("ian", "ish", "ese"), "street": (" Road",
                    " Lane", " Street")}


def ascii_fold(s: str) -> Optional[str]:
    """``s`` without diacritics, or ``None`` when some letter has no ASCII form (e.g. "Ł", "ø")."""
    folded = "".join(c for c in unicodedata.normalize("NFKD", s) if not unicodedata.combining(c))
    return folded if folded.isascii() else None


def invented_name(rng: np.random.Generator, kind: str) -> str:
    """A pronounceable invented ASCII name (the fallback when Faker or a pool has nothing left)."""
    word = "".join(str(rng.choice(_ONSETS)) + str(rng.choice(_VOWELS)) for _ in range(int(rng.integers(2, 4))))
    word = (word + str(rng.choice(_CODAS))).capitalize()
    suffixes = _INVENTED_SUFFIX.get(kind)
    return word + str(rng.choice(suffixes)) if suffixes else word


class NameSource:
    """Keyed draws of realistic names, places and companies; thread-safe.

    ``draw(kind, seed, attempt)`` is a pure function of its arguments (and the Faker version): Faker is
    re-seeded with the keyed ``seed`` under a lock before every draw.  ``kind`` is one of ``first``,
    ``first_female``, ``first_male``, ``last``, ``city``, ``country``, ``company``, ``street``,
    ``nationality``.  Without Faker (or
    after many rejected attempts) the invented pools and then invented names are used, so there is always
    another candidate.
    """

    FAKER_ATTEMPTS = 40

    def __init__(self, locales: Sequence[str] = DEFAULT_LOCALES, ascii_only: bool = True) -> None:
        self.locales = tuple(locales) or DEFAULT_LOCALES
        self.ascii_only = ascii_only
        self._fakers: Dict[str, Any] = {}
        self._genders: Optional[Dict[str, str]] = None
        self._given: Optional[frozenset] = None
        self._countries: Optional[frozenset] = None
        self._lock = threading.Lock()
        try:
            import faker  # noqa: F401
            self._has_faker = True
        except ImportError:  # pragma: no cover - faker is a dependency; the pools keep the operator usable
            self._has_faker = False

    def gender_of(self, given_name: str) -> Optional[str]:
        """``"female"`` or ``"male"`` when Faker's given-name lists of the locales (and English) agree on it,
        else ``None``: a public property of the name, so the surrogate's gender matches without any state."""
        if not self._has_faker:
            return None
        with self._lock:
            if self._genders is None:
                import importlib
                seen: Dict[str, set] = {}
                for locale in set(self.locales) | {"en_GB", "en_US"}:
                    try:
                        provider = importlib.import_module(f"faker.providers.person.{locale}").Provider
                    except ImportError:
                        continue
                    for gender in ("female", "male"):
                        for name in getattr(provider, f"first_names_{gender}", ()) or ():
                            seen.setdefault(str(name).lower(), set()).add(gender)
                self._genders = {n: next(iter(g)) for n, g in seen.items() if len(g) == 1}
            return self._genders.get(given_name.lower())

    def is_given_name(self, word: str) -> bool:
        """Whether ``word`` is a given name in Faker's lists of any locale (public data; restoration uses it
        to recognise a foreign full name such as "Gustavo Agullo")."""
        if not self._has_faker:
            return False
        with self._lock:
            if self._given is None:
                import importlib
                import pkgutil

                import faker.providers.person as person

                names: set = set()
                for mod in pkgutil.iter_modules(person.__path__):
                    try:
                        provider = importlib.import_module(f"faker.providers.person.{mod.name}").Provider
                    except (ImportError, AttributeError):
                        continue
                    for attr in ("first_names", "first_names_female", "first_names_male"):
                        values = getattr(provider, attr, ()) or ()
                        if isinstance(values, (list, tuple, dict, set, frozenset)):  # some are weighted dicts
                            names.update(str(n).lower() for n in values)
                self._given = frozenset(names)
        return word.lower() in self._given

    def is_country(self, name: str) -> bool:
        """Whether ``name`` is a country (by Faker's English country list)."""
        if not self._has_faker:
            return False
        with self._lock:
            if self._countries is None:
                from faker.providers.address.en_US import Provider
                self._countries = frozenset(c.lower() for c in Provider.countries)
        return " ".join(name.split()).lower() in self._countries

    def _faker(self, locale: str) -> Any:
        if locale not in self._fakers:
            from faker import Faker
            fake = Faker(locale)
            for provider in fake.providers:
                # it_IT builds its city list from a set, so its order (and every draw from it) followed the
                # process's string hash seed: a value got another surrogate in another process under one key
                if isinstance(getattr(provider, "cities", None), list):
                    provider.cities = sorted(provider.cities)
            self._fakers[locale] = fake
        return self._fakers[locale]

    def draw(self, kind: str, seed: int, attempt: int) -> Optional[str]:
        """One candidate (``None`` when this attempt gives nothing usable; the caller tries the next)."""
        rng = np.random.default_rng([seed, attempt, 1])
        if kind != "nationality" and self._has_faker and attempt < self.FAKER_ATTEMPTS:
            # countries are drawn from English locales only (others name them in their own language)
            locales = self.locales if kind != "country" else ("en_GB", "en_US")
            locale = locales[int(rng.integers(len(locales)))]
            with self._lock:
                fake = self._faker(locale)
                fake.seed_instance(int(rng.integers(2**62)))
                value = str(getattr(fake, _FAKER_METHODS[kind])())
        else:
            pool = _POOLS.get(kind, ())
            n = attempt - (self.FAKER_ATTEMPTS if self._has_faker and kind != "nationality" else 0)
            value = str(pool[int(rng.integers(len(pool)))]) if pool and n < 2 * len(pool) else invented_name(rng, kind)
        value = " ".join(value.split())
        if self.ascii_only:
            value = ascii_fold(value) or ""
        return value or None


# -- format-preserving codes and numbers ----------------------------------------------------------------

_DIGITS, _HEX = "0123456789", "0123456789ABCDEF"
_UPPER, _LOWER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz"
EMAIL_RE = re.compile(r"(?P<local>[^\s@]+)@(?P<domain>[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)")
URL_RE = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?:(?P<user>[^\s@/]*)@)?(?P<host>[^\s:/?#]+)"
                    r"(?P<port>:\d+)?(?P<rest>[/?#]\S*)?")
IBAN_RE = re.compile(r"(?P<cc>[A-Z]{2})(?P<check>\d{2})(?P<bban>(?: ?[A-Z0-9]){11,30})")
IPV4_RE = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")
CARD_RE = re.compile(r"\d(?:[ -]?\d){12,18}")
PHONE_RE = re.compile(r"\+?[\d(][\d ()./-]{5,}\d")


def _pick(rng: np.random.Generator, alphabet: str) -> str:
    return alphabet[int(rng.integers(len(alphabet)))]


def regenerate(s: str, rng: np.random.Generator, keep: str = "") -> str:
    """Every letter and digit of ``s`` drawn afresh from its class (case kept, non-ASCII letters become ASCII);
    everything else, and characters in ``keep``, stay in place."""
    out = []
    for ch in s:
        if ch in keep or not ch.isalnum():
            out.append(ch)
        elif ch.isdigit():
            out.append(_pick(rng, _DIGITS))
        else:
            out.append(_pick(rng, _UPPER if ch.isupper() else _LOWER))
    return "".join(out)


def _luhn_check_digit(payload: str) -> str:
    total = 0
    for i, ch in enumerate(reversed(payload)):
        d = int(ch) * (2 if i % 2 == 0 else 1)
        total += d - 9 if d > 9 else d
    return str((10 - total % 10) % 10)


def luhn_valid(number: str) -> bool:
    digits = re.sub(r"\D", "", number)
    return len(digits) >= 2 and _luhn_check_digit(digits[:-1]) == digits[-1]


def _iban_check(cc: str, bban: str) -> str:
    moved = bban.replace(" ", "") + cc + "00"
    return f"{98 - int(''.join(str(int(c, 36)) for c in moved)) % 97:02d}"


def _regenerate_digits_keep_shape(s: str, rng: np.random.Generator) -> str:
    """Digits redrawn; a number whose first digit was non-zero keeps a non-zero first digit (no "048,000")."""

    def number(m: "re.Match[str]") -> str:
        digits = iter(_pick(rng, _DIGITS[1:]) if i == 0 and m.group()[0] != "0" else _pick(rng, _DIGITS)
                      for i in range(sum(c.isdigit() for c in m.group())))
        return "".join(next(digits) if c.isdigit() else c for c in m.group())

    return re.sub(r"\d+(?:[.,']\d+)*", number, s)


_SCHEME_SWAP = {"https": "http", "http": "https", "ftp": "sftp", "sftp": "ftp", "ftps": "ftp", "wss": "ws",
                "ws": "wss", "ssh": "sftp"}
_GENERIC_TLDS = ("com", "org", "net", "info", "eu", "io")


def _other_tld(tld: str, rng: np.random.Generator) -> str:
    """A generic top-level domain other than ``tld`` (a country domain would say where the owner is)."""
    choices = [t for t in _GENERIC_TLDS if t != tld.lower()]
    return choices[int(rng.integers(len(choices)))]


def keeps_piece(candidate: str, original: str) -> bool:
    """Whether ``candidate`` still carries a run of 3+ letters or 4+ digits of ``original`` as a word."""
    for piece in re.findall(r"[^\W\d_]{3,}|\d{4,}", original):
        if re.search(rf"(?<![^\W\d_]){re.escape(piece)}(?![^\W\d_])" if piece.isalpha()
                     else rf"(?<!\d){piece}(?!\d)", candidate, re.IGNORECASE):
            return True
    return False


def code_surrogate(surface: str, rng: np.random.Generator) -> str:
    """A format-preserving surrogate for an identifier (CODE).

    E-mails and URLs stay syntactically valid (a generic top-level domain other than the original's, the
    scheme swapped for its sibling, a different port); IBANs keep their country and get valid check digits;
    card numbers stay Luhn-valid with their network digit; IPv4 addresses stay addresses; phones keep a
    leading ``+`` or trunk ``0``.  Every other letter and digit is drawn afresh.
    """
    s = surface
    m = EMAIL_RE.fullmatch(s)
    if m:
        labels = m["domain"].split(".")
        domain = ".".join([regenerate(x, rng).lower() for x in labels[:-1]] + [_other_tld(labels[-1], rng)])
        return f"{regenerate(m['local'], rng)}@{domain}"
    m = URL_RE.fullmatch(s)
    if m:
        labels = m["host"].split(".")
        if IPV4_RE.fullmatch(m["host"]):
            host = code_surrogate(m["host"], rng)
        elif len(labels) > 1:
            host = ".".join([regenerate(x, rng) for x in labels[:-1]] + [_other_tld(labels[-1], rng)])
        else:
            host = regenerate(labels[0], rng)
        name = m["scheme"][:-3]
        scheme = _SCHEME_SWAP.get(name.lower(), regenerate(name, rng).lower()) + "://"
        user = regenerate(m["user"], rng) + "@" if m["user"] is not None else ""
        port = ""
        if m["port"]:
            old = int(m["port"][1:])
            new_port = int(rng.integers(1024, 65535))
            port = f":{new_port if new_port != old else new_port + 1}"
        rest = re.sub(r"%[0-9A-Fa-f]{2}|[^%]+", lambda p: "%" + _pick(rng, _HEX) + _pick(rng, _HEX)
                      if p.group().startswith("%") else regenerate(p.group(), rng), m["rest"] or "")
        return f"{scheme}{user}{host}{port}{rest}"
    m = IBAN_RE.fullmatch(s)
    if m:
        bban = regenerate(m["bban"], rng)
        return m["cc"] + _iban_check(m["cc"], bban) + bban
    if IPV4_RE.fullmatch(s) and all(int(p) < 256 for p in s.split(".")):
        return ".".join(str(int(rng.integers(1, 255))) for _ in range(4))
    if CARD_RE.fullmatch(s) and luhn_valid(s):
        digits = re.sub(r"\D", "", s)
        new = digits[0] + "".join(_pick(rng, _DIGITS) for _ in digits[1:-1])
        new += _luhn_check_digit(new)
        it = iter(new)
        return "".join(next(it) if ch.isdigit() else ch for ch in s)
    if PHONE_RE.fullmatch(s):
        lead = re.match(r"\+?\(?0?", s).group()  # "+", a trunk "0" and an opening bracket stay
        body = s[len(lead):]
        new = "".join(_pick(rng, _DIGITS[1:]) if i == 0 and ch.isdigit() else
                      (_pick(rng, _DIGITS) if ch.isdigit() else ch) for i, ch in enumerate(body))
        return lead + new
    return regenerate(s, rng)


def number_surrogate(surface: str, rng: np.random.Generator) -> str:
    """Digits of an amount/age redrawn with their shape kept ("48,000 euros" -> "93,514 euros")."""
    return _regenerate_digits_keep_shape(surface, rng)


# -- dates ------------------------------------------------------------------------------------------------

_MONTH_ALT = "|".join(vocabulary.MONTHS + vocabulary.MONTH_ABBREVIATIONS)
_WEEKDAY_ALT = "Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|Thurs|Tues|Mon|Tue|Wed|Thu|Fri|Sat|Sun"
_ORD = r"(?:st|nd|rd|th)"
_MON = rf"(?:{_MONTH_ALT})\.?"
_WD = rf"(?:(?:{_WEEKDAY_ALT})\.?,?\s+(?:the\s+)?)"
DATE_RE = re.compile(
    rf"(?<!\w)(?:"
    rf"(?P<dmy>{_WD}?\d{{1,2}}{_ORD}?(?:\s+of)?\s+{_MON},?\s+\d{{4}})"
    rf"|(?P<mdy>{_WD}?{_MON}\s+\d{{1,2}}{_ORD}?,?\s+\d{{4}})"
    rf"|(?P<iso>\d{{4}}(?P<s1>[-/.])\d{{1,2}}(?P=s1)\d{{1,2}})"
    rf"|(?P<num>\d{{1,2}}(?P<s2>[-/.])\d{{1,2}}(?P=s2)(?:\d{{4}}|\d{{2}}))"
    rf"|(?P<my>{_MON},?\s+\d{{4}})"
    rf"|(?P<dm>\d{{1,2}}{_ORD}?(?:\s+of)?\s+{_MON})"
    rf"|(?P<md>{_MON}\s+\d{{1,2}}{_ORD}?)"
    rf"|(?P<decade>1\d{{2}}0|20\d0)'?s"
    rf"|(?P<year>1\d{{3}}|2\d{{3}})"
    rf"|(?P<month>January|February|March|April|(?-i:May)|June|July|August|September|October|November|December)"
    rf")(?!\w)",
    re.IGNORECASE)
# a time of day: "14:20", "08.15", or on a 12-hour clock "8:15am", "10.30 a.m.", "4pm"
_TIME_RE = re.compile(r"(?<![\w:.])(?:(?P<h12>1[0-2]|0?[1-9])(?:(?P<sep12>[:.])(?P<m12>[0-5]\d))?(?P<half>\s?(?i:[ap]))"
                      r"(?P<tail>\.?(?i:m)\.?)|(?P<h>[01]?\d|2[0-3])(?P<sep>[:.])(?P<m>[0-5]\d))(?![\w:])")


def _month_index(token: str) -> int:
    t = token.rstrip(".").lower()
    for i, name in enumerate(MONTHS):
        if name.lower().startswith(t[:3]) and (len(t) <= 4 or name.lower() == t):
            return i + 1
    raise ValueError(token)


def _styled(word: str, like: str) -> str:
    """``word`` in the letter case of ``like`` (UPPER, lower or as given)."""
    if like.isupper() and len(like) > 1:
        return word.upper()
    if like.islower():
        return word.lower()
    return word


def _month_like(month: int, like: str) -> str:
    """Month ``month`` written as ``like`` writes its month: full or abbreviated, dotted, same case."""
    bare = like.rstrip(".")
    full = MONTHS[month - 1]
    if len(bare) >= len(MONTHS[_month_index(bare) - 1]):
        name = full
    elif len(bare) == 4:  # "Sept"
        name = "Sept" if month == 9 else full[:3]
    else:
        name = full[:3]
    return _styled(name, bare) + ("." if like.endswith(".") and name != full else "")


def _ordinal(day: int) -> str:
    return "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


def _day_like(day: int, like: str) -> str:
    digits = re.match(r"\d+", like).group()
    text = f"{day:02d}" if len(digits) == 2 and digits.startswith("0") else str(day)
    suffix = like[len(digits):]
    return text + (_styled(_ordinal(day), suffix) if suffix else "")


def _shifted_time(m: "re.Match[str]", minutes: int) -> str:
    """A time of day ``minutes`` later, in its own format; on a 12-hour clock with its am or pm (letters as written),
    and by whole hours when it has no minutes ("4pm" -> "6pm")."""
    if m["h"] is not None:
        t = (int(m["h"]) * 60 + int(m["m"]) + minutes) % 1440
        return f"{_field_like(t // 60, m['h'])}{m['sep']}{t % 60:02d}"
    half = m["half"]
    start = (int(m["h12"]) % 12 + (12 if half.strip().lower() == "p" else 0)) * 60 + int(m["m12"] or 0)
    t = (start + (minutes if m["m12"] else 60 * max(1, minutes // 60))) % 1440
    hour = t // 60 % 12 or 12
    letter = "a" if t < 720 else "p"
    shown = half[:-1] + (letter.upper() if half[-1].isupper() else letter)
    clock = _field_like(hour, m["h12"]) + (f"{m['sep12']}{t % 60:02d}" if m["m12"] else "")
    return clock + shown + m["tail"]


def _field_like(value: int, like: str) -> str:
    return f"{value:0{len(like)}d}" if len(like) > 1 and like.startswith("0") else str(value)


def _shift(d: dt.date, days: int) -> dt.date:
    try:
        return d + dt.timedelta(days=days)
    except OverflowError:
        return d - dt.timedelta(days=days)


def shift_days(digest: bytes) -> int:
    """A keyed shift of 1-4 years plus 30-335 days, forward or backward: day, month and year all move."""
    n = 365 * (1 + digest[0] % 4) + 30 + int.from_bytes(digest[1:3], "big") % 306
    return n if digest[3] & 1 else -n


@dataclass(frozen=True)
class DatePart:
    """One date expression found in a span: where, what it was, what it became, and its parsed values
    (``kind`` is ``full``, ``month_year``, ``day_month``, ``year`` or ``other``)."""

    start: int
    end: int
    original: str
    surrogate: str
    kind: str
    orig_date: Optional[Tuple[int, int, int]] = None
    sur_date: Optional[Tuple[int, int, int]] = None


def _textual_tokens(s: str) -> Dict[str, "re.Match[str]"]:
    """Matches of the weekday, day, month and year tokens of a textual date (missing ones left out)."""
    found: Dict[str, "re.Match[str]"] = {}
    wd = re.match(rf"(?:{_WEEKDAY_ALT})\.?(?=,?\s)", s, re.I)
    if wd:
        found["weekday"] = wd
    pos = wd.end() if wd else 0
    for name, pattern in (("year", r"(?<!\d)\d{4}(?!\d)"), ("day", rf"(?<!\d)\d{{1,2}}{_ORD}?(?![\d])"),
                          ("month", rf"(?<!\w)(?:{_MONTH_ALT})\.?")):
        m = re.compile(pattern, re.I).search(s, pos)
        if m and not any(o.start() < m.end() and m.start() < o.end() for o in found.values()):
            found[name] = m
    return found


def _rewrite_textual(s: str, new: dt.date, tokens: Dict[str, "re.Match[str]"]) -> str:
    """``s`` with its weekday, day, month and year tokens replaced by ``new``'s, each in its own style."""
    edits = []
    for name, m in tokens.items():
        tok = m.group()
        if name == "weekday":
            bare = tok.rstrip(".")
            full = WEEKDAYS[new.weekday()]
            repl = _styled(full if len(bare) > 4 else full[:len(bare)], bare) + ("." if tok.endswith(".") else "")
        elif name == "year":
            repl = str(new.year)
        elif name == "month":
            repl = _month_like(new.month, tok)
        else:
            repl = _day_like(new.day, tok)
        edits.append((m.start(), m.end(), repl))
    out = s
    for a, b, repl in sorted(edits, reverse=True):
        out = out[:a] + repl + out[b:]
    return out


def _day_of(tokens: Dict[str, "re.Match[str]"]) -> int:
    return int(re.match(r"\d+", tokens["day"].group()).group())


def shift_date_expression(expr: str, kind: str, days: int, day_first: bool) -> Optional[DatePart]:
    """Shift one matched date expression by ``days``; ``None`` when it does not parse as a real date."""
    try:
        if kind in ("dmy", "mdy"):
            tok = _textual_tokens(expr)
            old = dt.date(int(tok["year"].group()), _month_index(tok["month"].group()), _day_of(tok))
            new = _shift(old, days)
            return DatePart(0, 0, expr, _rewrite_textual(expr, new, tok), "full",
                            (old.year, old.month, old.day), (new.year, new.month, new.day))
        if kind == "iso":
            y, sep, m, _, d = re.split(r"([-/.])", expr)
            old = dt.date(int(y), int(m), int(d))
            new = _shift(old, days)
            sur = f"{new.year:04d}{sep}{_field_like(new.month, m)}{sep}{_field_like(new.day, d)}"
            return DatePart(0, 0, expr, sur, "full", (old.year, old.month, old.day), (new.year, new.month, new.day))
        if kind == "num":
            a, sep, b, _, y = re.split(r"([-/.])", expr)
            ia, ib = int(a), int(b)
            dmy = ia > 12 or (ib <= 12 and day_first)
            day, month = (ia, ib) if dmy else (ib, ia)
            year = int(y) if len(y) == 4 else (1900 + int(y) if int(y) > 30 else 2000 + int(y))
            old = dt.date(year, month, day)
            new = _shift(old, days)
            ny = f"{new.year:04d}" if len(y) == 4 else f"{new.year % 100:02d}"
            first, second = (new.day, new.month) if dmy else (new.month, new.day)
            # written with two-digit fields ("03/11/1984", "12/11/1984"): both stay two digits ("23/08/1982")
            if (len(a) == 2 and len(b) == 2) or a.startswith("0") or b.startswith("0"):
                a = b = "00"
            sur = f"{_field_like(first, a)}{sep}{_field_like(second, b)}{sep}{ny}"
            return DatePart(0, 0, expr, sur, "full", (old.year, old.month, old.day), (new.year, new.month, new.day))
        if kind == "my":
            tok = _textual_tokens(expr)
            old = dt.date(int(tok["year"].group()), _month_index(tok["month"].group()), 15)
            new = _shift(old, days)
            tok.pop("day", None)
            return DatePart(0, 0, expr, _rewrite_textual(expr, new, tok), "month_year",
                            (old.year, old.month, 0), (new.year, new.month, 0))
        if kind in ("dm", "md"):
            tok = _textual_tokens(expr)
            old = dt.date(2000, _month_index(tok["month"].group()), _day_of(tok))  # a leap year: 29 Feb parses
            new = _shift(old, days)
            return DatePart(0, 0, expr, _rewrite_textual(expr, new, tok), "day_month",
                            (0, old.month, old.day), (0, new.month, new.day))
        if kind == "month":
            new = _shift(dt.date(2000, _month_index(expr), 15), days)
            return DatePart(0, 0, expr, _month_like(new.month, expr), "other")
        if kind == "decade":
            y = int(expr[:4])
            decade = _shift(dt.date(y + 5, 7, 2), days).year // 10 * 10
            decade = decade if decade != y else y + (10 if days > 0 else -10)
            return DatePart(0, 0, expr, str(decade) + expr[4:], "other")
        if kind == "year":
            new_year = _shift(dt.date(int(expr), 7, 2), days).year
            return DatePart(0, 0, expr, str(new_year), "year", (int(expr), 0, 0), (new_year, 0, 0))
    except (ValueError, KeyError, AttributeError, OverflowError):
        return None
    return None


def shift_dates(surface: str, days: int, minutes: int, day_first: bool = True,
                rng: Optional[np.random.Generator] = None) -> Tuple[str, List[DatePart]]:
    """Every date expression of ``surface`` shifted by ``days`` (times of day by ``minutes``), in its own format.

    Digits outside any recognized date or time are redrawn with ``rng`` when at least one part was shifted
    (a range "3-5 May 1961" keeps no original digit).  Returns the new surface and the parts
    (empty when nothing was recognized: the caller then falls back to a placeholder).
    """
    parts: List[DatePart] = []
    for m in DATE_RE.finditer(surface):
        kind = next(k for k, v in m.groupdict().items() if v is not None and k not in ("s1", "s2"))
        part = shift_date_expression(m.group(), kind, days, day_first)
        if part is not None:
            parts.append(DatePart(m.start(), m.end(), part.original, part.surrogate, part.kind,
                                  part.orig_date, part.sur_date))
    taken = [(p.start, p.end) for p in parts]
    for m in _TIME_RE.finditer(surface):
        if any(a < m.end() and m.start() < b for a, b in taken):
            continue
        parts.append(DatePart(m.start(), m.end(), m.group(), _shifted_time(m, minutes), "other"))
    if not parts:
        return surface, []
    parts.sort(key=lambda p: p.start)
    parts = _with_range_starts(surface, parts, days)
    out, cursor = [], 0
    for p in parts:
        gap = surface[cursor:p.start]
        out.append(_regenerate_digits_keep_shape(gap, rng) if rng is not None else gap)
        out.append(p.surrogate)
        cursor = p.end
    tail = surface[cursor:]
    out.append(_regenerate_digits_keep_shape(tail, rng) if rng is not None else tail)
    return "".join(out), parts


# the first day of a range written before its date ("12 and 13 November", "9 to 11 March 2024")
_RANGE_START = re.compile(r"(?<![\d.,/])(\d{1,2})(\s*(?:-|–|to|and|until|till|through|&)\s*)$")


def _with_range_starts(surface: str, parts: List[DatePart], days: int) -> List[DatePart]:
    """``parts`` and the first day of each range before a day-first date, moved by the same shift ("12 and 13
    November" -> "3 and 4 May", not a redrawn "94"); with its own month when the shift puts the two in different
    months ("30 April and 1 May")."""
    out: List[DatePart] = []
    cursor = 0
    for p in parts:
        m = _RANGE_START.search(surface, cursor, p.start) if p.kind in ("full", "day_month") and p.orig_date \
            and p.sur_date and p.original[:1].isdigit() else None
        if m is not None and m.end() == p.start and 1 <= int(m.group(1)) < p.orig_date[2]:
            year = p.orig_date[0] or 2000
            new = _shift(dt.date(year, p.orig_date[1], int(m.group(1))), days)
            text = _field_like(new.day, m.group(1))
            if new.month != p.sur_date[1]:
                text += " " + MONTHS[new.month - 1]
                if p.kind == "full" and new.year != p.sur_date[0]:
                    text += f" {new.year}"
            out.append(DatePart(m.start(1), m.end(1), m.group(1), text, "other"))
        out.append(p)
        cursor = p.end
    return out


def date_variants(sur: Tuple[int, int, int]) -> List[str]:
    """Common ways an LLM may write back the full date ``sur`` = (year, month, day)."""
    y, m, d = sur
    month, mon, o = MONTHS[m - 1], MONTHS[m - 1][:3], _ordinal(d)
    forms = [f"{d} {month} {y}", f"{d:02d} {month} {y}", f"{d}{o} {month} {y}", f"{d} {month}, {y}",
             f"the {d}{o} of {month} {y}", f"{d}{o} of {month} {y}", f"{d} {mon} {y}", f"{d} {mon}. {y}",
             f"{d:02d} {mon} {y}", f"{month} {d}, {y}", f"{month} {d} {y}", f"{month} {d}{o}, {y}",
             f"{mon} {d}, {y}", f"{mon}. {d}, {y}", f"{mon} {d} {y}", f"{y}-{m:02d}-{d:02d}", f"{y}/{m:02d}/{d:02d}",
             f"{d:02d}/{m:02d}/{y}", f"{d}/{m}/{y}", f"{d:02d}.{m:02d}.{y}", f"{d}.{m}.{y}", f"{d:02d}-{m:02d}-{y}",
             f"{m:02d}/{d:02d}/{y}", f"{m}/{d}/{y}"]
    if m == 9:
        forms += [f"{d} Sept {y}", f"Sept {d}, {y}", f"{d} Sept. {y}"]
    return list(dict.fromkeys(forms))


def partial_variants(sur: Tuple[int, int, int], orig: Tuple[int, int, int]) -> List[Tuple[str, str]]:
    """(surrogate partial, original partial) pairs: "October 2008" -> "May 1961", "15 October" -> "3 May"."""
    (sy, sm, sd), (oy, om, od) = sur, orig
    pairs: List[Tuple[str, str]] = []
    if sy and sm and oy and om:
        pairs += [(f"{MONTHS[sm - 1]} {sy}", f"{MONTHS[om - 1]} {oy}"),
                  (f"{MONTHS[sm - 1][:3]} {sy}", f"{MONTHS[om - 1][:3]} {oy}")]
    if sm and sd and om and od:
        pairs += [(f"{sd} {MONTHS[sm - 1]}", f"{od} {MONTHS[om - 1]}"),
                  (f"{MONTHS[sm - 1]} {sd}", f"{MONTHS[om - 1]} {od}"),
                  (f"{sd}{_ordinal(sd)} {MONTHS[sm - 1]}", f"{od}{_ordinal(od)} {MONTHS[om - 1]}"),
                  (f"{MONTHS[sm - 1]} {sd}{_ordinal(sd)}", f"{MONTHS[om - 1]} {od}{_ordinal(od)}")]
    if sy and oy:
        pairs.append((str(sy), str(oy)))
    return pairs


def month_year_variants(sur: Tuple[int, int, int]) -> List[str]:
    y, m, _ = sur
    return [f"{MONTHS[m - 1]} {y}", f"{MONTHS[m - 1]}, {y}", f"{MONTHS[m - 1][:3]} {y}", f"{MONTHS[m - 1][:3]}. {y}",
            f"{y}-{m:02d}", f"{m:02d}/{y}"]


def day_month_variants(sur: Tuple[int, int, int]) -> List[str]:
    _, m, d = sur
    month, mon, o = MONTHS[m - 1], MONTHS[m - 1][:3], _ordinal(d)
    return [f"{d} {month}", f"{d}{o} {month}", f"{month} {d}", f"{month} {d}{o}", f"{d} {mon}", f"{mon} {d}",
            f"the {d}{o} of {month}"]
