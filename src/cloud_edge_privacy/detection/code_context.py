"""Identifiers of program code are not private: "get_user", "catalogItemId", "def get_user(id" are what a
developer's prompt is about.  Models read them as organisations and codes, and the cloud got "maria toft)" for
"def get_user(id" to fix.

A span is code when a code character is inside it ("(", "=", "{", ";"), or one is next to it, spaces aside (".",
"=", "(" or "," before it; "(", ".", "=", ";", ")" or "," after it), and every word is a keyword, a snake_case or
lowerCamelCase identifier, or an everyday lower-case word, with at least one keyword, identifier or call
("print(user"), and no number stands alone in it ("between 1980 and 1981", "TRY 2,767").  Company names written in
camel case ("DoorDash", "eBay", "LinkedIn") are no identifiers here, unless a member is read from them as code
("UserService.getProfile"), an identifier with a word of the person-name
lists in it stays a candidate ("send_to(john_smith)"), and so does a name inside a string (a quote is no code
character).
"""
from __future__ import annotations

import re
from typing import List

from ..lexicon import ORDINARY_ZIPF, everyday_lower_word, known_names
from .. import wordlists

_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")
_CALL = re.compile(r"[A-Za-z_]\w*\(")
# lowerCamelCase with a first word of two letters or more: "catalogItemId", not "eBay", "iPhone" or "DoorDash"
# (an employer's name in a CV)
_CAMEL = re.compile(r"[a-z][a-z0-9]+[A-Z]")
_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_CODE_CHARS = frozenset("(){}[]=;<>")
# a class's member written as code: "UserService.getProfile", "OrderRepo.find_by_id" (not "DoorDash.com")
_MEMBER = re.compile(r"\b([A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+)\.(?=[a-z][a-z0-9]*[A-Z_])")
# keywords no prose uses, of the languages people paste most (Python, JavaScript/TypeScript, Java, C#, C, Go):
# evidence of code.  English words that are keywords too ("and", "for", "return") are only everyday words here.
KEYWORDS = wordlists.words("code_keywords")


# SQL's keywords, written in capitals as queries are: evidence of code ("SELECT first_name, last_name FROM ...")
SQL_KEYWORDS = wordlists.words("sql_keywords")


def _parts(identifier: str) -> List[str]:
    """The lower-case words of a snake_case or camelCase identifier ("catalogItemId" -> catalog, item, id)."""
    return [p.lower() for chunk in identifier.split("_") for p in _PART.findall(chunk)]


def identifier_words(surface: str) -> List[str]:
    """The lower-case words of every identifier in ``surface`` ("send_to(johnSmith)" -> send, to, john, smith)."""
    return [p for token in _TOKEN.findall(surface) for p in _parts(token)]


# words of SQL's clauses that are keywords only beside the ones above ("GROUP BY", "ORDER BY name DESC")
_SQL_GLUE = wordlists.words("sql_glue_words")


def sql_phrase(surface: str) -> bool:
    """Whether ``surface`` is only SQL keywords in capitals, one of them more than glue ("GROUP BY", "ORDER BY"):
    a clause of a query a model read as a name."""
    words = surface.split()
    return bool(words) and all(w in SQL_KEYWORDS or w in _SQL_GLUE for w in words) \
        and any(w in SQL_KEYWORDS for w in words)


def code_identifier(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is program code, not a name (see the module docstring)."""
    surface = text[start:end]
    # the nearest non-space characters on each side (scanned, not sliced: this runs on every kept span)
    i, j = start, end
    while i > 0 and text[i - 1].isspace():
        i -= 1
    while j < len(text) and text[j].isspace():
        j += 1
    before, after = text[i - 1:i], text[j:j + 1]
    if not (any(c in _CODE_CHARS for c in surface) or after in tuple("(.=;),") or before in tuple(".=(,")):
        return False
    names = known_names()
    styled = bool(_CALL.search(surface))  # "print(user": a call
    classes = {m.group(1) for m in _MEMBER.finditer(text[start:end + 40])}  # its member may follow it
    for token in _TOKEN.findall(surface):
        if token.isdigit():
            return False  # an amount, a year, an application number: not code
        low = token.lower()
        if low in KEYWORDS or token in SQL_KEYWORDS:
            styled = True
        elif "_" in token.strip("_") or _CAMEL.match(token) or token in classes:
            if any(p in names for p in _parts(token)):
                return False
            styled = True
        elif not everyday_lower_word(token, ORDINARY_ZIPF):  # "xs" in "total(xs" too
            return False
    return styled
