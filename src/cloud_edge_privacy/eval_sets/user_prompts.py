"""The user-prompt evaluation set: realistic prompts with gold spans, in TAB's official JSON format.

Generated from :mod:`.templates` with Faker (seeded, so the frozen files are reproducible) plus hand-written
prompts.  The split is by template: every other template (and every other hand-written prompt) is in
``test``, so test prompts share no sentence frame with dev.  A third split, ``tune``, comes from
:data:`.templates.TUNE_TEMPLATES` (frames written later for tuning; see there).  Regenerate the frozen files with
``python scripts/eval_user_prompts.py --regenerate``.
"""
from __future__ import annotations

import base64
import json
import random
import re
import string
import unicodedata
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..vocabulary import MONTHS
from .templates import HANDWRITTEN, TEMPLATES, TUNE_TEMPLATES

DATA_DIR = Path(__file__).resolve().parents[3] / "examples" / "UserPrompts"
SPLITS = ("dev", "test", "tune")
_SLOT = re.compile(r"\{(\w+)\.(\w+)\}")
_MARK = re.compile(r"\[\[(.+?)\|(\w+)\|(DIRECT|QUASI)\|(\w+)\]\]", re.S)
_NAME_FIELDS = {"full": None, "first": None, "last": None, "lower": None, "upper": None, "first_lower": None,
                "last_lower": None}
# field -> (TAB category, identifier type); name fields are mentions of the person entity itself
_FIELDS: Dict[str, Tuple[str, str]] = {
    **{f: ("PERSON", "DIRECT") for f in _NAME_FIELDS},
    "email": ("CODE", "DIRECT"), "phone": ("CODE", "DIRECT"), "address": ("LOC", "DIRECT"),
    "age": ("DEM", "QUASI"), "age_small": ("DEM", "QUASI"), "linkedin": ("CODE", "DIRECT"),
    "user": ("CODE", "DIRECT"), "handle": ("CODE", "DIRECT"), "mrn": ("CODE", "DIRECT"), "ssn": ("CODE", "DIRECT"),
    "policy": ("CODE", "DIRECT"), "iban": ("CODE", "DIRECT"), "invoice": ("CODE", "QUASI"), "card": ("CODE", "DIRECT"),
    "nino": ("CODE", "DIRECT"), "national_id": ("CODE", "DIRECT"), "passport": ("CODE", "DIRECT"),
    "plate": ("CODE", "DIRECT"), "tracking": ("CODE", "DIRECT"),
    "company": ("ORG", "QUASI"), "school": ("ORG", "QUASI"), "hospital": ("ORG", "QUASI"), "city": ("LOC", "QUASI"),
    "year_range": ("DATETIME", "QUASI"), "month_year": ("DATETIME", "QUASI"), "long": ("DATETIME", "QUASI"),
    "dob_dot": ("DATETIME", "QUASI"), "dob_us": ("DATETIME", "QUASI"), "dob_iso": ("DATETIME", "QUASI"),
    "year": ("DATETIME", "QUASI"),
    "openai": ("CODE", "DIRECT"), "db_url": ("CODE", "DIRECT"), "aws_id": ("CODE", "DIRECT"),
    "aws_secret": ("CODE", "DIRECT"), "hex": ("CODE", "DIRECT"), "token": ("CODE", "DIRECT"), "jwt": ("CODE", "DIRECT"),
    "github": ("CODE", "DIRECT"), "password": ("CODE", "DIRECT"), "slack": ("CODE", "DIRECT"),
    "webhook": ("CODE", "DIRECT"), "pin": ("CODE", "DIRECT"), "ip": ("CODE", "QUASI"), "domain": ("CODE", "QUASI"),
}
_MONTHS = MONTHS
_SCHOOL = {"de_DE": "Universität {}", "fr_FR": "Université de {}", "es_ES": "Universidad de {}",
           "it_IT": "Università di {}", "pl_PL": "Uniwersytet {}", "nl_NL": "Universiteit {}"}
_HOSPITAL = {"de_DE": "Klinikum {}", "fr_FR": "CHU de {}", "nl_NL": "Ziekenhuis {}"}


def _ascii(s: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", s) if c.isascii() and (c.isalnum() or c in ".-"))


def _rand(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _nino(rng: random.Random) -> str:
    first = rng.choice("ABCEGHJKLMNPRSTWXYZ")
    second = rng.choice("ABCEGHJKLMNPRSTWXYZ".replace("O", ""))
    while first + second in ("BG", "GB", "NK", "KN", "TN", "NT", "ZZ"):
        second = rng.choice("ABCEGHJKLMNPRSTWXYZ")
    digits = _rand(rng, string.digits, 6)
    suffix = rng.choice("ABCD")
    if rng.random() < 0.5:
        return f"{first}{second} {digits[:2]} {digits[2:4]} {digits[4:]} {suffix}"
    return f"{first}{second}{digits}{suffix}"


class _Entities:
    """Lazily generated entity fields of one prompt (one Faker instance, one locale)."""

    def __init__(self, locale: str, seed: int) -> None:
        from faker import Faker

        self.locale = locale
        self.fake = Faker(locale)
        self.fake.seed_instance(seed)
        self.en = Faker("en_US")
        self.en.seed_instance(seed + 1)
        self.rng = random.Random(seed)
        self.values: Dict[Tuple[str, str], str] = {}
        self.people: Dict[str, Tuple[str, str]] = {}

    def _person(self, ent: str) -> Tuple[str, str]:
        if ent not in self.people:
            self.people[ent] = (self.fake.first_name(), self.fake.last_name())
        return self.people[ent]

    def _user(self, ent: str) -> str:
        first, last = self._person(ent)
        base = _ascii(first).lower()[:1] + _ascii(last).lower().replace("-", "")
        if len(base) < 4:
            base = self.fake.user_name()
        return base + str(self.rng.randint(1, 99)) if self.rng.random() < 0.6 else base

    def get(self, ent: str, field: str) -> str:
        key = (ent, field)
        if key not in self.values:
            self.values[key] = self._make(ent, field)
        return self.values[key]

    def _date(self) -> Any:
        return self.fake.date_between(start_date="-3y", end_date="+1y")

    def _make(self, ent: str, field: str) -> str:  # noqa: C901 - one branch per field
        f, rng = self.fake, self.rng
        first, last = self._person(ent) if ent.startswith("p") else ("", "")
        cjk = self.locale in ("zh_CN", "ja_JP", "ko_KR")
        full = (last + (" " if self.locale == "ja_JP" else "") + first) if cjk else f"{first} {last}"
        simple: Dict[str, Callable[[], str]] = {
            "full": lambda: full, "first": lambda: first, "last": lambda: last, "lower": lambda: full.lower(),
            "upper": lambda: full.upper(), "first_lower": lambda: first.lower(),
            "last_lower": lambda: last.lower(),
            "user": lambda: self.get(ent, "_user"), "_user": lambda: self._user(ent),
            "handle": lambda: "@" + self.get(ent, "_user"),
            "email": lambda: (f"{_ascii(first).lower()}.{_ascii(last).lower()}@{f.free_email_domain()}"
                              if len(_ascii(first)) > 1 and len(_ascii(last)) > 1
                              else f"{self.get(ent, '_user')}@{self.en.free_email_domain()}"),
            "phone": lambda: f.phone_number(),
            "age": lambda: str(rng.randint(19, 88)), "age_small": lambda: str(rng.randint(2, 12)),
            "linkedin": lambda: f"https://www.linkedin.com/in/{self.get(ent, '_user')}",
            "mrn": lambda: str(rng.randint(1000000, 9999999)), "ssn": lambda: self.en.ssn(),
            "policy": lambda: f"POL-{rng.randint(10000000, 99999999)}", "iban": lambda: f.iban(),
            "invoice": lambda: f"INV-{rng.randint(2019, 2025)}-{rng.randint(1, 9999):04d}",
            "card": lambda: " ".join(re.findall(".{1,4}", self.en.credit_card_number(card_type="visa16"))),
            "nino": lambda: _nino(rng), "national_id": lambda: f.ssn(), "passport": lambda: f.passport_number(),
            "plate": lambda: f.license_plate(),
            "tracking": lambda: "1Z" + _rand(rng, string.ascii_uppercase + string.digits, 16),
            "company": lambda: f.company(), "city": lambda: f.city(),
            "school": lambda: _SCHOOL.get(self.locale, "University of {}").format(self.en.city()
                                                                                  if cjk else f.city()),
            "hospital": lambda: _HOSPITAL.get(self.locale, "{} General Hospital").format(self.en.last_name()),
            "year_range": lambda: f"{(y := rng.randint(2012, 2020))}–{y + rng.randint(1, 4)}",
            "month_year": lambda: f"{_MONTHS[rng.randrange(12)]} {rng.randint(2015, 2024)}",
            "year": lambda: str(rng.randint(2015, 2024)),
            "openai": lambda: "sk-proj-" + _rand(rng, string.ascii_letters + string.digits + "-_", 48),
            "db_url": lambda: (f"postgres://{self.en.user_name()}:{self.en.password(length=12, special_chars=False)}"
                               f"@db.{self.en.domain_name()}:5432/app"),
            "aws_id": lambda: "AKIA" + _rand(rng, string.ascii_uppercase + "234567", 16),
            "aws_secret": lambda: _rand(rng, string.ascii_letters + string.digits + "/+", 40),
            "hex": lambda: _rand(rng, "0123456789abcdef", 40),
            "token": lambda: _rand(rng, string.ascii_letters + string.digits, 32),
            "jwt": lambda: self._jwt(ent),
            "github": lambda: "ghp_" + _rand(rng, string.ascii_letters + string.digits, 36),
            "password": lambda: self.en.password(length=rng.randint(9, 14)),
            "slack": lambda: (f"xoxb-{rng.randint(10**10, 10**11)}-{rng.randint(10**11, 10**12)}-"
                              + _rand(rng, string.ascii_letters + string.digits, 24)),
            "webhook": lambda: ("T" + _rand(rng, string.ascii_uppercase + string.digits, 8) + "/B"
                                + _rand(rng, string.ascii_uppercase + string.digits, 8) + "/"
                                + _rand(rng, string.ascii_letters + string.digits, 24)),
            "pin": lambda: str(rng.randint(1000, 9999)), "ip": lambda: self.en.ipv4_public(),
            "domain": lambda: self.en.domain_name(),
        }
        if field in simple:
            return simple[field]()
        if field == "address":
            if self.locale == "en_US":
                return f"{self.en.street_address()}, {self.en.city()}, {self.en.state_abbr()} {self.en.zipcode()}"
            if self.locale in ("ru_RU", "uk_UA", "zh_CN", "ja_JP", "ko_KR", "hi_IN", "el_GR"):
                return f.address().replace("\n", ", ")
            return f"{f.street_address()}, {f.postcode()} {f.city()}"
        d = self._date() if not field.startswith("dob") else f.date_of_birth(minimum_age=18, maximum_age=85)
        if field == "long":
            if self.locale.startswith("en") or self.locale in ("zh_CN", "ja_JP", "ko_KR", "hi_IN"):
                return (f"{_MONTHS[d.month - 1]} {d.day}, {d.year}" if rng.random() < 0.5
                        else f"{d.day} {_MONTHS[d.month - 1]} {d.year}")
            return d.strftime("%d.%m.%Y") if self.locale in ("de_DE", "nl_NL", "pl_PL", "ru_RU") else d.strftime("%d/%m/%Y")
        if field == "dob_dot":
            return d.strftime("%d.%m.%Y")
        if field == "dob_us":
            return d.strftime("%m/%d/%Y")
        if field == "dob_iso":
            return d.isoformat()
        raise KeyError(f"unknown template field {field!r}")

    def _jwt(self, ent: str) -> str:
        def b64(obj: Any) -> str:
            return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()).rstrip(b"=").decode()

        payload = {"sub": str(self.rng.randint(10**5, 10**6)), "name": self.en.name(), "exp": self.rng.randint(1_700_000_000, 1_800_000_000)}
        sig = _rand(self.rng, string.ascii_letters + string.digits + "-_", 43)
        return f"{b64({'alg': 'HS256', 'typ': 'JWT'})}.{b64(payload)}.{sig}"


def _mention(text: str, start: int, end: int, cat: str, kind: str, entity: str, i: int, doc_id: str) -> Dict[str, Any]:
    return {"entity_type": cat, "entity_mention_id": f"{doc_id}_em{i}", "start_offset": start, "end_offset": end,
            "span_text": text[start:end], "identifier_type": kind, "entity_id": f"{doc_id}_{entity}",
            "confidential_status": "NOT_CONFIDENTIAL"}


def render(template: str, locale: str, seed: int, doc_id: str) -> Dict[str, Any]:
    """One prompt from a template: its text and the gold mentions of every slot."""
    ents = _Entities(locale, seed)
    parts: List[str] = []
    spans: List[Tuple[int, int, str, str, str]] = []
    pos, length = 0, 0
    for m in _SLOT.finditer(template):
        parts.append(template[pos:m.start()])
        length += m.start() - pos
        ent, field = m.group(1), m.group(2)
        value = ents.get(ent, field)
        cat, kind = _FIELDS[field]
        entity = ent if field in _NAME_FIELDS else f"{ent}.{field.replace('handle', 'user')}"
        spans.append((length, length + len(value), cat, kind, entity))
        parts.append(value)
        length += len(value)
        pos = m.end()
    parts.append(template[pos:])
    text = "".join(parts)
    mentions = [_mention(text, s, e, c, k, ent, i, doc_id) for i, (s, e, c, k, ent) in enumerate(spans)]
    return {"doc_id": doc_id, "text": text, "annotations": {"gold": {"entity_mentions": mentions}}}


def parse_handwritten(marked: str, doc_id: str) -> Dict[str, Any]:
    """A hand-written prompt with ``[[surface|CAT|KIND|entity]]`` markup -> text and gold mentions."""
    parts: List[str] = []
    spans: List[Tuple[int, int, str, str, str]] = []
    pos, length = 0, 0
    for m in _MARK.finditer(marked):
        parts.append(marked[pos:m.start()])
        length += m.start() - pos
        surface = m.group(1)
        spans.append((length, length + len(surface), m.group(2), m.group(3), m.group(4)))
        parts.append(surface)
        length += len(surface)
        pos = m.end()
    parts.append(marked[pos:])
    text = "".join(parts)
    mentions = [_mention(text, s, e, c, k, ent, i, doc_id) for i, (s, e, c, k, ent) in enumerate(spans)]
    return {"doc_id": doc_id, "text": text, "annotations": {"gold": {"entity_mentions": mentions}}}


def generate(per_template: int = 4, seed: int = 2026) -> Dict[str, List[Dict[str, Any]]]:
    """All splits: templates alternate between dev and test (in the order written), so do hand-written prompts;
    the tuning templates make ``tune`` from their own random stream."""
    out: Dict[str, List[Dict[str, Any]]] = {s: [] for s in SPLITS}
    rng = random.Random(seed)
    for t_index, (tid, domain, locales, template) in enumerate(TEMPLATES):
        split = SPLITS[t_index % 2]
        for k in range(per_template):
            locale = locales[rng.randrange(len(locales))]
            doc = render(template, locale, rng.randrange(2**31), f"{tid}-{k}")
            doc.update(meta={"source": "template", "template": tid, "domain": domain, "locale": locale})
            out[split].append(doc)
    rng_tune = random.Random(seed + 1)  # its own stream, so dev and test do not change
    for tid, domain, locales, template in TUNE_TEMPLATES:
        for k in range(per_template):
            locale = locales[rng_tune.randrange(len(locales))]
            doc = render(template, locale, rng_tune.randrange(2**31), f"{tid}-{k}")
            doc.update(meta={"source": "template", "template": tid, "domain": domain, "locale": locale})
            out["tune"].append(doc)
    for h_index, marked in enumerate(HANDWRITTEN):
        doc = parse_handwritten(marked, f"hand-{h_index:02d}")
        doc.update(meta={"source": "handwritten", "template": "", "domain": "handwritten", "locale": ""})
        out[SPLITS[h_index % 2]].append(doc)
    return out


def split_path(split: str, data_dir: Optional[Path] = None) -> Path:
    return (data_dir or DATA_DIR) / f"user_prompts_{split}.json"


def write_splits(data_dir: Optional[Path] = None, **kwargs: Any) -> List[Path]:
    """Generate and write the frozen files (deterministic for a given Faker version and seed)."""
    paths = []
    for split, docs in generate(**kwargs).items():
        p = split_path(split, data_dir)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(docs, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        paths.append(p)
    return paths


def load_split(split: str, data_dir: Optional[Path] = None) -> List[Dict[str, Any]]:
    """The frozen documents of one split, as TAB-format dicts."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; known: {SPLITS}")
    return json.loads(split_path(split, data_dir).read_text(encoding="utf-8"))
