"""Structured identifiers found by one compiled regular-expression pass plus maintained validators.

Shapes are matched by a single alternation (one scan of the text); each candidate is then classified by a
validator: ``phonenumbers`` for phones in any country and format, ``python-stdnum`` for IBANs, cards (Luhn)
and the US SSN, keyword, prefix and entropy rules for secrets.  No model, no co-reference: it is what the
egress guard runs over every outgoing request, so it must stay fast.  Every span has a TAB category
(CODE for all of these); secrets have a ``source`` starting with ``secret:`` (see :func:`is_secret`).
"""
from __future__ import annotations

import ipaddress
import math
import re
from collections import Counter
from functools import lru_cache
from typing import Callable, Dict, Iterator, List, Optional, Tuple

from .. import wordlists
from ..spans import SECRET_PREFIX, Span, is_secret, non_space_run  # noqa: F401 (is_secret re-exported)
from .recognizer import register_recognizer
# Regions tried for a national-format phone number (no +country prefix), most common first.
PHONE_REGIONS = ("US", "GB", "DE", "FR", "ES", "IT", "NL", "PL", "SE", "BR", "PT", "IN", "JP", "CN", "KR", "RU",
                 "UA", "GR", "TR", "IE", "AU", "CA", "CH", "AT", "BE", "DK", "NO", "FI", "CZ", "MX", "AR", "ZA", "NG")
# An English cue starts a word ("ExxonMobil, 2019-2023" and "during 2019" hold no "mobil" or "ring" cue); the
# others may end one ("Handynummer", "我的电话").
_PHONE_CUE = re.compile(
    r"(?i)(?:(?<!\w)(?:phone|tel(?:ephone|efon|éfono|efone|éphone)?|mobile?|móvil|movil|cell|call|ring|text|"
    r"whats ?app|fax|contact|reach|number|no\.?)|numéro|nummer|numero|número|joindre|anrufen|телефон|тел|τηλέφωνο|"
    r"電話|电话|#)\W{0,6}(?:\w+\W+){0,3}$")
# Two years joined by a dash or slash, the second later: a period ("2019-2023"), never a phone or an account.
_YEAR_RANGE = re.compile(r"(19|20)\d\d\s?[-–/]\s?(19|20)\d\d")
_SECRET_WORDS = (r"pass(?:word|wd|phrase|code)|pwd|secret|token|api[_ -]?key|apikey|access[_ -]?key|private[_ -]?key|"
                 r"client[_ -]?secret|auth(?:[_-]?(?:token|key|code))?|credentials?|pin|passwort|kennwort|mot de passe|contraseña|senha|пароль|"
                 r"wachtwoord|hasło|parola|salasana|lösenord")
_DATE_LIKE = re.compile(r"^(?:\d{1,4}[./-]\d{1,2}[./-]\d{1,4}|\d{1,2}:\d{2}(?::\d{2})?)$")
_DATE_INSIDE = re.compile(r"(?<!\d)(?:\d{4}[./-]\d{1,2}[./-]\d{1,2}|\d{1,2}[./-]\d{1,2}[./-]\d{4})(?!\d)")
_TLDS = wordlists.alternation("top_level_domains")  # "com|org|net|...|mx|ar"
# Hosts of public services: naming them identifies nobody.
PUBLIC_HOSTS = wordlists.words("public_hosts")  # with public health bodies and the literature clinicians cite
# URL path segments after which the next segment names a person or account.
_PERSONAL_PATH = wordlists.words("personal_path_segments")
_PLATFORMS = wordlists.alternation("social_platforms")  # "linkedin|facebook|...|spotify"
_PROFILE_HOSTS = wordlists.words("profile_hosts")

_PATTERN = re.compile("|".join([
    r"(?P<pem>-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]{0,5000}?-----END [A-Z ]*PRIVATE KEY-----)",
    r"(?P<url>\b(?:https?|s?ftp|ssh|git|wss?|postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|redis|amqps?|smb|jdbc:\w+)"
    r"://[^\s<>\"'`]+)",
    r"(?P<www>\bwww\.[\w-]+(?:\.[\w-]+)+[^\s<>\"'`]*)",
    r"(?P<email>\b[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}\b)",
    r"(?P<jwt>\beyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{8,})",
    r"(?P<prefixed>\b(?:sk-(?:proj-|live-|test-|ant-)?|sk_(?:live|test)_|rk_(?:live|test)_|pk_(?:live|test)_|gh[pousr]_|"
    r"github_pat_|glpat-|xox[abeprs]-|hf_|npm_|AIza|ya29\.|AKIA|ASIA|SG\.|shpat_|dop_v1_)[A-Za-z0-9_\-.]{12,})",
    rf"(?P<keyed>(?i:\b(?:\w+[_-])?(?:{_SECRET_WORDS})(?:[_-]\w+)?\b)(?:\s+(?:for|of|to|on)\s+[\w ]{{1,30}}?)?"
    r"(?:\s*[:=]\s*|\s+(?:is|ist|est|es|é|è|era|was|=)\s+)['\"]?(?P<keyed_value>[^\s'\",;]{4,}?)['\"]?(?=[\s,;'\"]|[.!?](?:\s|$)|$))",
    # a short secret right after its cue, without ":" or "is" ("PIN 4821", "passcode 902211", "password x7Tq9")
    r"(?P<cue_secret>(?i:\b(?:pin|passcode|pass ?code|password|passwort|pwd)\b)(?:\s+(?:no\.?|number|code|#))?\s+"
    r"(?P<cue_secret_value>(?=[^\s'\",;]*\d)[^\s'\",;]{4,32}?)(?=[\s,;'\"]|[.!?](?:\s|$)|$))",
    r"(?P<bearer>(?i:\b(?:bearer|basic|token)\s+)(?P<bearer_value>[A-Za-z0-9_\-.=+/]{16,}))",
    r"(?P<path>(?:\b[A-Za-z]:\\\\?(?:Users|Documents and Settings)\\\\?|(?<![\w.])/(?:home|Users)/|/(?:users?|u|profiles?|people|"
    r"members?|accounts?)/)(?P<path_user>[^\\/\s:*?\"<>|\[\]{}]+))",
    # an account written as a path after its platform's name ("LinkedIn: /lumentechnologies")
    rf"(?P<social>(?i:\b(?:{_PLATFORMS})\b)\s*:\s*/(?P<social_value>[A-Za-z0-9_][A-Za-z0-9_.-]{{0,60}}[A-Za-z0-9_]))",
    r"(?P<handle>(?<![\w@.])@[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,38}[A-Za-z0-9_])?)",
    r"(?P<user>(?i:\b(?:user(?:[ _-]?name)?|login|uid|handle|benutzer(?:name)?|utilisateur|usuario|пользователь)\b)"
    r"(?:\s*[:=]\s*|\s+)(?P<user_value>[A-Za-z0-9_][A-Za-z0-9_.-]{2,31}))",
    r"(?P<iban>(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}(?![A-Za-z0-9]))",
    r"(?P<nino>(?<![A-Za-z0-9])[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D](?![A-Za-z0-9]))",
    r"(?P<plate>(?<![A-Za-z0-9])[A-Z]{2}\d{2} ?[A-Z]{3}(?![A-Za-z0-9]))",
    r"(?P<ipv4>(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w.]|\.\d))",
    # IPv6 in full or compressed form ("fe80::1ff:fe23:4567:890a", "2001:db8:85a3::8a2e:370:7334"), zone id
    # allowed; ipaddress decides (times such as 12:30:45 are not addresses)
    r"(?P<ipv6>(?<![\w:])(?:[0-9A-Fa-f]{1,4}|:)(?::[0-9A-Fa-f]{0,4}){2,7}(?:%[\w.]+)?(?![\w:]))",
    r"(?P<code>(?<![A-Za-z0-9])(?=[A-Z0-9-]*\d[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])[A-Z0-9](?:[A-Z0-9]|-(?=[A-Z0-9])){5,}"
    r"(?![A-Za-z0-9]))",
    r"(?P<number>(?<![A-Za-z0-9_+.,/])(?:\+|00)?\(?\d{1,15}\)?(?:(?:[ .-]|\)\s?|\s?\(|\s?-\s?)\(?\d{1,12}\)?){0,6}"
    r"(?:\s?(?:x|ext\.?)\s?\d{1,5})?(?![A-Za-z0-9_/]|[.,]\d))",
    rf"(?P<domain>(?<![\w@./-])(?:[a-z0-9](?:[a-z0-9-]{{0,61}}[a-z0-9])?\.)+(?:{_TLDS})\b(?![.-]?\w))",
]))
# a cue word is a whole word, or its plural ("account(s)", not "accounting for 38.18%"; "card", not "cardiology")
_CONTEXT_ID = re.compile(
    r"(?i)(?:\b(?:id|no\.?|nr\.?|number|num[ée]ro|nummer|passport|pass|ssn|nhs|nino|insurance|account|member|"
    r"patient|policy|dni|nie|pesel|cpf|bsn|codice|steuer|tax|national|license|licence|reference|ref|card)"
    r"s?(?![^\W\d_])|n[º°]|#|номер|паспорт|身份证|番号)\W{0,4}(?:\w+\W+){0,2}$")


def shannon_entropy(s: str) -> float:
    """Bits per character of ``s``."""
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values()) if n else 0.0


def looks_random(token: str) -> bool:
    """A credential-like random token: long, mixed classes and high entropy (hex from 32 characters)."""
    if len(token) < 16:
        return False
    if re.fullmatch(r"[0-9a-fA-F]{32,}", token):
        return True
    classes = sum(bool(re.search(p, token)) for p in (r"[a-z]", r"[A-Z]", r"\d"))
    if len(token) >= 30 and re.search(r"[a-z]", token) and re.search(r"[A-Z]", token) and (re.search(r"[/+]", token) or sum(c.isdigit() for c in token) >= 2):
        return shannon_entropy(token) >= 4.0  # base64 keys (AWS secret keys) may hold a single digit
    if len(token) < 20 or classes < 3 or sum(c.isdigit() for c in token) < 2:
        return False
    return shannon_entropy(token) >= 3.7


@lru_cache(maxsize=1)
def _random_token() -> "re.Pattern[str]":
    return re.compile(r"(?<![\w/+=-])[A-Za-z0-9+/_\-]{20,}={0,2}(?![\w/+=-])")


def _valid_iban(s: str) -> bool:
    from stdnum import iban

    return iban.is_valid(s)


def _valid_card(digits: str) -> bool:
    from stdnum import luhn

    return 13 <= len(digits) <= 19 and len(set(digits)) > 1 and luhn.is_valid(digits)


def _valid_ssn(s: str) -> bool:
    """The SSN shape (area not 000/666/9xx, group not 00, serial not 0000).  python-stdnum's blacklist of
    famous published numbers (078-05-1120, 219-09-9999) is deliberately not applied: users paste them too."""
    m = re.fullmatch(r"(\d{3})-(\d{2})-(\d{4})", s)
    return bool(m) and m.group(1) not in ("000", "666") and m.group(1)[0] != "9" and m.group(2) != "00" \
        and m.group(3) != "0000"


def _phone(s: str, cue: bool) -> bool:
    """A valid phone number: international (+, 00) anywhere; national format in some region, which without a
    phone cue nearby must also look like a dialled number (leading 0, brackets or NANP grouping)."""
    import phonenumbers

    digits = re.sub(r"\D", "", s)
    if not 7 <= len(digits) <= 15:
        return False
    base = re.split(r"\s?(?:x|ext\.?)\s?\d", s)[0]
    try:
        if base.startswith(("+", "00")):
            num = phonenumbers.parse("+" + base.lstrip("+0") if base.startswith("00") else base, None)
            return phonenumbers.is_valid_number(num) or (cue and phonenumbers.is_possible_number(num))
    except phonenumbers.NumberParseException:
        return False
    shaped = (base.startswith(("0", "(")) or re.fullmatch(r"\(?\d{3}\)?[ .-]\d{3}[ .-]\d{4}", base) is not None)
    if not (cue or shaped):
        return False
    for region in PHONE_REGIONS:
        try:
            if phonenumbers.is_valid_number(phonenumbers.parse(base, region)):
                return True
        except phonenumbers.NumberParseException:
            continue
    return False


def _nino_ok(s: str) -> bool:
    return s.replace(" ", "")[:2] not in ("BG", "GB", "NK", "KN", "TN", "NT", "ZZ")


def _host_is_public(host: str) -> bool:
    host = host.lower().rstrip(".")
    parts = host.split(".")
    return any(".".join(parts[i:]) in PUBLIC_HOSTS for i in range(len(parts)))


_QUERY_START = re.compile(r"[?#]")
_ARTICLE_PATH = re.compile(r"(?:/*\d+)?/*")  # nothing, or one number: "/24621041/"
_WEB_ADDRESS = re.compile(r"(?:https?://)?(?:www\.)?((?:[a-z0-9-]+\.)+[a-z]{2,})(?:[/?#]\S*)?", re.IGNORECASE)


def outside_public_host(text: str, start: int, end: int) -> Optional[Tuple[int, int]]:
    """A span ``[start, end)`` in a URL or bare host on a public host (:data:`PUBLIC_HOSTS`: "nice.org.uk",
    "https://pubmed.ncbi.nlm.nih.gov/24621041/"): None when the address has no path but one number (an
    article's) and the span ends before its query: that identifies nobody.  Any other span that takes a
    piece of the host is widened to the whole address up to its end, so one surrogate replaces the host with the
    rest (a masked piece of a host makes a host no surrogate explains, and the egress guard's rule 3 refuses it).
    A span after the host is returned as it is; this recognizer finds the account segments of such a URL as of
    any."""
    a, b = non_space_run(text, start, end)
    while a < start and text[a] in "(<[\"'":
        a += 1
    while b > end and text[b - 1] in ".,;:!?)>]\"'":
        b -= 1
    m = _WEB_ADDRESS.fullmatch(text, a, b)
    if m is None or not _host_is_public(m.group(1)):
        return start, end
    query = _QUERY_START.search(text, m.end(1), b)
    path_end = query.start() if query else b
    if end <= path_end and _ARTICLE_PATH.fullmatch(text, m.end(1), path_end):
        return None
    return (min(start, a), max(end, m.end(1))) if start < m.end(1) else (start, end)


def _ip_ok(s: str) -> bool:
    try:
        ip = ipaddress.ip_address(s.split("%")[0])
    except ValueError:
        return False
    return not (ip.is_loopback or ip.is_unspecified)


# Span.source -> fine entity type (secrets are SECRET whatever their source)
_FINE_TYPES = {
    "structured:email": "EMAIL", "structured:phone": "PHONE", "structured:iban": "IBAN", "structured:card": "CARD",
    "structured:ip": "IP", "structured:url_host": "URL", "structured:url_user": "URL", "structured:url_query": "URL",
    "structured:domain": "URL", "structured:ssn": "ID_NUMBER", "structured:nino": "ID_NUMBER",
    "structured:id_number": "ID_NUMBER", "structured:username": "USERNAME", "structured:handle": "USERNAME",
    "structured:path_user": "USERNAME", "structured:plate": "LICENSE_PLATE", "structured:number": "NUMBER"}


@register_recognizer("structured", {"CODE"}, {"structured": 4, "secret": 5}, fine_types=_FINE_TYPES)
class StructuredRecognizer:
    """E-mails; URLs (credentials, non-public hosts, personal path segments, secret query values); domains;
    IPv4/IPv6; phones (``phonenumbers``, any country, international or national format); IBANs and cards
    (``python-stdnum``); US SSN; UK NINO; passports, IDs and other letter-digit codes; long or grouped
    numbers next to an ID cue; secrets (PEM keys, JWTs, provider-prefixed keys such as ``sk-``/``ghp_``/
    ``AKIA``/``xoxb-``, values after password/token/secret/PIN keywords, bearer tokens, high-entropy tokens);
    user segments of file paths; @handles, accounts written as a path after a platform's name ("LinkedIn:
    /acme") and values after ``user=``/``username``.  Category CODE throughout.
    """

    def analyze(self, text: str) -> List[Span]:
        out: List[Span] = []
        for m in _PATTERN.finditer(text):
            kind = m.lastgroup
            handler = _HANDLERS.get(kind or "")
            if handler is not None:
                out.extend(handler(text, m))
        out.extend(_lowercase_ibans(text, out))
        covered = [(s.start, s.end) for s in out]
        for m in _random_token().finditer(text):
            if looks_random(m.group()) and not any(a <= m.start() and m.end() <= b for a, b in covered):
                out.append(Span(m.start(), m.end(), "CODE", 0.8, SECRET_PREFIX + "entropy"))
        return out


_IBAN_ANY_CASE = re.compile(r"(?i)(?<![a-z0-9])(?=([a-z]{2}\d{2}(?:[ -]?[a-z0-9]){11,34}))")


def _lowercase_ibans(text: str, found: List[Span]) -> List[Span]:
    """IBANs typed in lower or mixed case ("gb82 west 1234 5698 7654 32"), checked by their checksum; a separate
    scan so that a failed candidate does not hide other identifiers from the one-pass pattern."""
    out: List[Span] = []
    for m in _IBAN_ANY_CASE.finditer(text):
        value = m.group(1)
        if value.isupper() or any(s.start <= m.start() < s.end for s in found + out):
            continue
        # the longest prefix, cut at a space or hyphen or at the end, that is a valid IBAN
        cuts = [i for i, c in enumerate(value) if c in " -"] + [len(value)]
        for cut in reversed(cuts):
            cand = value[:cut]
            if 15 <= len(re.sub(r"[ -]", "", cand)) <= 34 and _valid_iban(cand.upper().replace("-", " ")):
                out.append(Span(m.start(), m.start() + cut, "CODE", 0.95, "structured:iban"))
                break
    return out


def _span(m: "re.Match[str]", group: str, source: str, score: float = 0.9) -> Iterator[Span]:
    start, end = m.span(group)
    value = m.group(group)
    stripped = value.rstrip(".,;:!?)'\"")
    end -= len(value) - len(stripped)
    if end > start:
        yield Span(start, end, "CODE", score, source)


def _url(text: str, m: "re.Match[str]") -> Iterator[Span]:
    start = m.start()
    url = m.group().rstrip(".,;:!?)'\"")
    scheme_end = url.find("://")
    rest_at = scheme_end + 3 if scheme_end >= 0 else 0
    rest = url[rest_at:]
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    if "@" in authority:  # credentials: the whole URL
        yield Span(start, start + len(url), "CODE", 0.95, SECRET_PREFIX + "url_credentials")
        return
    else:
        host = authority.split(":")[0]
        if host and not _host_is_public(host):
            yield Span(start + rest_at, start + rest_at + len(authority), "CODE", 0.8, "structured:url_host")
        return_path_from = rest_at + len(authority)
    host = authority.split("@")[-1].split(":")[0].lower()
    path = url[return_path_from:]
    pos = start + return_path_from
    segments = [(mm.start(), mm.group()) for mm in re.finditer(r"[^/?#&=]+", path.split("?")[0])]
    profile_host = host.removeprefix("www.") in _PROFILE_HOSTS
    for i, (off, seg) in enumerate(segments):
        prev = segments[i - 1][1].lower() if i else ""
        personal = prev in _PERSONAL_PATH or (profile_host and i == 0 and prev == "") or seg.startswith(("~", "@"))
        if personal or looks_random(seg) or (host.endswith("linkedin.com") and prev == "in"):
            src = SECRET_PREFIX + "url_token" if looks_random(seg) and not personal else "structured:url_user"
            yield Span(pos + off, pos + off + len(seg), "CODE", 0.85, src)
    if "?" in path:
        q_at = path.index("?")
        for mm in re.finditer(r"([\w.-]+)=([^&#\s]+)", path[q_at:]):
            key, val = mm.group(1).lower(), mm.group(2)
            if re.search(_SECRET_WORDS + r"|sig|signature|key|session|code", key) or looks_random(val):
                yield Span(pos + q_at + mm.start(2), pos + q_at + mm.end(2), "CODE", 0.9, SECRET_PREFIX + "url_query")
            elif "@" in val or re.search(r"user|name|email|mail|phone|id", key):
                yield Span(pos + q_at + mm.start(2), pos + q_at + mm.end(2), "CODE", 0.8, "structured:url_query")


def _www(text: str, m: "re.Match[str]") -> Iterator[Span]:
    host = re.split(r"[/?#:]", m.group(), maxsplit=1)[0]
    if not _host_is_public(host[4:]):
        yield Span(m.start(), m.start() + len(host), "CODE", 0.8, "structured:domain")


def _domain(text: str, m: "re.Match[str]") -> Iterator[Span]:
    host = m.group()
    if not _host_is_public(host) and not re.fullmatch(r"[a-z]+\.(?:py|md|sh|js|ts|rs|go|rb|pl|cs|in|it|me|at|be|co|no)",
                                                      host):
        yield Span(m.start(), m.end(), "CODE", 0.7, "structured:domain")


def _number(text: str, m: "re.Match[str]") -> Iterator[Span]:
    s = m.group().rstrip(" .-")
    start, end = m.start(), m.start() + len(s)
    if _valid_ssn(s):
        yield Span(start, end, "CODE", 0.95, "structured:ssn")
        return
    if not s or _DATE_LIKE.match(s) or _DATE_INSIDE.search(s):
        return
    years = s.strip("()[] ")  # "(2016-2019)" in a CV
    if _YEAR_RANGE.fullmatch(years) and int(years[:4]) < int(years[-4:]):
        return
    digits = re.sub(r"\D", "", s)
    if (re.fullmatch(r"\d{13,19}|\d{4}(?:[ -]\d{4}){2,3}(?:[ -]\d{1,3})?", s)) and _valid_card(digits):
        yield Span(start, end, "CODE", 0.95, "structured:card")
    elif len(digits) >= 7 and _phone(s, _PHONE_CUE.search(text[max(0, start - 40):start]) is not None):
        yield Span(start, end, "CODE", 0.9, "structured:phone")
    elif len(digits) >= 8 and (s.isdigit() or len(digits) >= 9):
        yield Span(start, end, "CODE", 0.8, "structured:number")
    elif len(digits) >= 4 and _CONTEXT_ID.search(text[max(0, start - 30):start]):
        yield Span(start, end, "CODE", 0.75, "structured:id_number")


# words after a secret's keyword that are no secret ("password is required", "token expired")
_NOT_SECRETS = wordlists.words("keyed_values_not_secrets")


# a value that only refers to one kept elsewhere: an environment or template variable ("${DB_PASSWORD}", "$TOKEN",
# "%API_KEY%", "{{ secret }}", "<password>", "os.environ['KEY']"), or an identifier named for the key itself
# ("password=password", "user_password", "self.token"): code that passes a secret along, not the secret
_REFERENCE = re.compile(r"^(?:\$\{[^{}]+\}|\$[A-Za-z_]\w*|%[A-Za-z_]\w*%|\{\{[^{}]*\}\}|<[^<>\s]+>|"
                        r"(?:os\.environ|os\.getenv|process\.env|getenv|ENV\[)\S*)$")
_KEY_NAMED = re.compile(r"(?i)^[\w.]*?(?:^|[_.])(?:pass(?:word|wd)?|pwd|secret|token|api_?key|key|user(?:_?name)?|"
                        r"login)(?:$|[_.])[\w.]*$")


def keyed_reference(value: str) -> bool:
    """Whether the value after a secret's or a user name's key only refers to a value kept elsewhere
    (:data:`_REFERENCE`, :data:`_KEY_NAMED`); "hunter2", "password123" and "Tr0ub4dor&3" do not."""
    bare = value.rstrip(")]},;'\"")  # without the call or literal the value closes ("password=password)")
    return any(_REFERENCE.match(v) or _KEY_NAMED.match(v) for v in (value, bare))


def _keyed(text: str, m: "re.Match[str]") -> Iterator[Span]:
    value = m.group("keyed_value")
    if value.lower() in _NOT_SECRETS or keyed_reference(value):
        return
    yield from _span(m, "keyed_value", SECRET_PREFIX + "keyword", 0.9)


def _username(text: str, m: "re.Match[str]") -> Iterator[Span]:
    """The value after a user-name cue: after ``:``/``=`` always; after a space only when it looks like one (a
    digit, ``_`` or ``.``, or after "username"/"login"/"handle") and is no English word ("username and password",
    "login page")."""
    value = m.group("user_value")
    if keyed_reference(value):
        return
    keyed = re.search(r"[:=]\s*$", text[m.start():m.start("user_value")]) is not None
    if not keyed:
        if not (re.search(r"[\d_.]", value) or re.match(r"(?i)user[ _-]?name|login|handle", m.group())):
            return
        from ..lexicon import english_zipf, function_words

        if value.lower() in function_words() or english_zipf(value.lower()) >= _USERNAME_WORD_ZIPF:
            return
    yield from _span(m, "user_value", "structured:username", 0.8)


# a word at least this common in English after "username " is the sentence going on, not a user name
_USERNAME_WORD_ZIPF = 3.5


_HANDLERS: Dict[str, Callable[[str, "re.Match[str]"], Iterator[Span]]] = {
    "pem": lambda t, m: _span(m, "pem", SECRET_PREFIX + "private_key", 1.0),
    "url": _url,
    "www": _www,
    "email": lambda t, m: _span(m, "email", "structured:email", 0.95),
    "jwt": lambda t, m: _span(m, "jwt", SECRET_PREFIX + "jwt", 0.95),
    "prefixed": lambda t, m: _span(m, "prefixed", SECRET_PREFIX + "prefixed_key", 0.95),
    "keyed": _keyed,
    "cue_secret": lambda t, m: _span(m, "cue_secret_value", SECRET_PREFIX + "cue", 0.9),
    "bearer": lambda t, m: _span(m, "bearer_value", SECRET_PREFIX + "bearer", 0.9),
    "path": lambda t, m: _span(m, "path_user", "structured:path_user", 0.85),
    "handle": lambda t, m: _span(m, "handle", "structured:handle", 0.8),
    "social": lambda t, m: _span(m, "social_value", "structured:handle", 0.8),
    "plate": lambda t, m: _span(m, "plate", "structured:plate", 0.8),
    "user": _username,
    "iban": lambda t, m: _span(m, "iban", "structured:iban", 0.95) if _valid_iban(m.group()) else iter(()),
    "nino": lambda t, m: _span(m, "nino", "structured:nino", 0.9) if _nino_ok(m.group()) else iter(()),
    "ipv4": lambda t, m: _span(m, "ipv4", "structured:ip", 0.9) if _ip_ok(m.group()) else iter(()),
    "ipv6": lambda t, m: _span(m, "ipv6", "structured:ip", 0.9)
    if _ip_ok(m.group()) and re.search(r"[A-Fa-f]|::", m.group()) else iter(()),
    "code": lambda t, m: _span(m, "code", "structured:code", 0.75),
    "number": _number,
    "domain": _domain,
}


def structured_kinds() -> Tuple[str, ...]:
    """The shape names of the one-pass pattern (for documentation and tests)."""
    return tuple(_PATTERN.groupindex)


def first_match_kind(text: str) -> Optional[str]:
    """The kind of the first structured span in ``text`` (a debugging helper)."""
    spans = StructuredRecognizer().analyze(text)
    return min(spans).source if spans else None
