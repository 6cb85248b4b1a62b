"""Technical text read as such: the syntax of code, configuration and markup is not personal, its data may be.

A developer's prompt pastes code, a config file or HTML; the models read its identifiers, keys, tags and font names
as people and organisations ("roboto", "BaseModel", "ray"), and every one masked breaks the code the cloud is asked
to fix.  Here a text is cut into *technical syntax* and everything else:

* a **technical line** is a line of a fenced block (a line of three backticks or tildes opens and closes it), or,
  outside fences, a line that reads as code: it ends with ``{``, ``}``, ``;`` or ``):``, starts with a keyword of
  the languages people paste (``def``, ``class``, ``import``, ``return``, ``function``, ``const``, ``#include``,
  SQL's ``SELECT``...), is a tag (``<div ...>``), or is a call or an assignment written as code (``x = f(y)``,
  ``self.items.append(item)``);
* inside a technical line, **data** stays data: string literals (``"..."``, ``'...'``, backticks, typographic
  quotes as word processors write them), comments
  (``#``, ``//``, ``--``, ``/* */``, ``<!-- -->``), the value of a ``key: value`` or ``key = value`` line, and the
  text between two tags;
* the rest of a technical line is **syntax**: identifiers, keywords, keys, tag and attribute names, operators;
  except that five or more plain words in a row are prose wherever they stand (quotes that nest, a sentence on
  the same line as code).

:func:`syntax_regions` returns the syntax ranges.  The post-detection step ``technical_text`` drops a span that lies
wholly in syntax, unless a validator found it (an e-mail, a key or a token stays a secret wherever it is) or it is
an identifier with a name-list word that is no everyday word (``send_to(john_smith)``): so ``username``,
``password`` and ``BaseModel`` are not masked, ``password = "hunter2"`` still has its value checked, and the name
in ``user = "Anna Berg"`` is still a name.  No vocabulary beyond the keyword list: the rest is punctuation.
"""
from __future__ import annotations

import keyword
import re
from typing import TYPE_CHECKING, List, Sequence, Tuple

from ..lexicon import common_name_word, known_names
from .code_context import identifier_words

if TYPE_CHECKING:
    from ..spans import Span

_FENCE = re.compile(r"^\s*(```|~~~)")
# keywords that open a line of code in the languages people paste most (Python, JavaScript/TypeScript, Java, C#, C,
# Go, Rust, PHP, shell, SQL)
_CODE_START = re.compile(
    r"^\s*(?:def|class|import|from\s+[\w.]+\s+import|return|elif|else:|try:|except\b|finally:|with\s+.+:$|"
    r"async\s+def|await|lambda|raise|yield|assert|pass$|function\b|const|let|var|export|module\.exports|"
    r"public|private|protected|static|void|package|namespace|using\s+[\w.]+;|#include|#define|fn\s+\w+|impl\b|"
    r"pub\s|func\s|echo\s|sudo\s|pip\s+install|npm\s|git\s|cd\s|SELECT\b|INSERT\b|UPDATE\b|DELETE\b|CREATE\b|"
    r"ALTER\b|DROP\b)")
_CODE_END = re.compile(r"(?:[{}]|\):|\)\s*\{|=>\s*\{?)\s*$")
_TAG_LINE = re.compile(r"^\s*</?[A-Za-z][\w:-]*(?:\s[^<>]*)?/?>")
# a call or an assignment written as code: "x = f(y)", "self.items.append(item)", "total += price * qty"
_CODE_EXPR = re.compile(r"^\s*[A-Za-z_$][\w.$\[\]'\"]*(?:\s*[-+*/%|&^]?=(?!=)|\()\s*\S")
_KEY_VALUE = re.compile(r"^(\s*[-*]?\s*[\"']?[\w.$@/-]+[\"']?\s*)(:|=)(?!=)\s*(.*)$")
_LITERAL = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|`[^`\n]*`|“[^”\n]*”|‘[^’\n]*’|<!--.*?-->|/\*.*?\*/|'
                      r'(?:(?<=\s)|^)(?:#|//|--)\s.*$', re.M)
_BETWEEN_TAGS = re.compile(r">([^<>\n]+)<")
# five or more plain words in a row outside any literal are prose (a JSON value whose quotes nest, a sentence
# around a snippet), not syntax
_PROSE = re.compile(r"(?<![\w.])(?:[A-Za-z][a-z'’-]*[,.]?[ \t]+){4,}[A-Za-z][a-z'’-]*(?![\w(])")


def _technical_line(line: str) -> bool:
    """Whether a line outside a fence reads as code.  A keyword at its start counts with a code character in it or
    in a short line ("return the form to Anna" is prose); a ";" at its end with "(", "=" or ")" in it (court texts
    end their list items with ";")."""
    stripped = line.strip()
    if not stripped:
        return False
    coded = any(c in stripped for c in "()[]{}=")
    if _CODE_START.match(line) and (coded or len(stripped.split()) <= 5):
        return True
    if stripped.endswith(";") and (coded or len(stripped.split()) <= 2):
        return True
    return bool(_TAG_LINE.match(line) or _CODE_END.search(line) or (_CODE_EXPR.match(line) and coded))


def _data_ranges(line: str) -> List[Tuple[int, int]]:
    """Ranges of ``line`` that are data: literals, comments, a key's value, text between tags.  A literal or value
    of one token (``"tok2vec"``, ``1000``, ``spacy.Tokenizer.v1``, ``null``) is syntax like a name in code, and so is
    a quoted key (``"msiName": {``); a name-list word in it is still kept by :func:`drop_syntax_spans`."""
    out = [m.span() for m in _LITERAL.finditer(line)
           if not _QUOTED_KEY.match(line, m.end()) and _spaced(m.group())]
    out += [m.span(1) for m in _BETWEEN_TAGS.finditer(line)]
    kv = _KEY_VALUE.match(line)
    value = kv.group(3) if kv else ""
    if value and not any(c in value for c in "(){};") and not value.endswith(("[", "{")) and _spaced(value):
        out.append((kv.start(3), len(line)))
    return out


_QUOTED_KEY = re.compile(r"\s*:(?!:)")


def _spaced(literal: str) -> bool:
    """Whether a literal, a comment or a value holds more than one token (words with a space between them)."""
    return len(literal.strip().strip("\"'`").split()) > 1


def syntax_regions(text: str) -> List[Tuple[int, int]]:
    """The ``[start, end)`` ranges of ``text`` that are the syntax of code, configuration or markup (see the
    module docstring): a technical line minus its data."""
    out: List[Tuple[int, int]] = []
    fenced = False
    pos = 0
    for line in text.split("\n"):
        start, end = pos, pos + len(line)
        pos = end + 1
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not (fenced or _technical_line(line)):
            continue
        cut = start
        for a, b in sorted(_data_ranges(line) + [m.span() for m in _PROSE.finditer(line)]):
            if start + a > cut:
                out.append((cut, start + a))
            cut = max(cut, start + b)
        if cut < end:
            out.append((cut, end))
    return out


def within(regions: Sequence[Tuple[int, int]], start: int, end: int) -> bool:
    """Whether ``[start, end)`` lies wholly inside one of the (sorted, disjoint) ``regions``."""
    lo, hi = 0, len(regions)
    while lo < hi:
        mid = (lo + hi) // 2
        if regions[mid][1] <= start:
            lo = mid + 1
        else:
            hi = mid
    return lo < len(regions) and regions[lo][0] <= start and end <= regions[lo][1]


_VALIDATED = ("structured", "secret")
# an identifier-like code with digits (a record id, an account or order number): data wherever it stands
_CODE_WITH_DIGITS = re.compile(r"(?=[A-Za-z]*\d)[A-Za-z0-9]{6,}|\d{5,}")


def plain_syntax(text: str, regions: Sequence[Tuple[int, int]], start: int, end: int) -> bool:
    """Whether ``text[start:end]`` lies wholly in syntax (``regions``, :func:`syntax_regions`) and is no
    identifier that may be personal: no name-list word that is not an everyday word too (``john_smith``; not
    ``ray``, ``mark``, ``key``: ``lexicon.common_name_word``), no
    code with digits of six characters or more (``8ca422836f04``, ``100234``)."""
    if not within(regions, start, end):
        return False
    surface = text[start:end]
    if _CODE_WITH_DIGITS.search(surface):
        return False
    names = known_names()
    return not any(w in names and not common_name_word(w) and not language_literal(w) and len(w) > 2
                   for w in identifier_words(surface))


def language_literal(word: str) -> bool:
    """Whether a (lower-case) word is a keyword of Python in some case (``True``, ``None``: Python's own list,
    ``keyword.kwlist``) or JSON's ``null``: the values of configuration files ("strict_optional = True"), never a
    person however a name list holds "True"."""
    return word == "null" or keyword.iskeyword(word) or keyword.iskeyword(word.capitalize())


def drop_syntax_spans(text: str, spans: Sequence["Span"]) -> List["Span"]:
    """Without the spans that are plain syntax of code, configuration or markup (:func:`plain_syntax`), except
    what a validator found (e-mails, URLs, keys, tokens)."""
    regions = syntax_regions(text) if spans else []
    if not regions:
        return list(spans)
    return [s for s in spans if s.source.startswith(_VALIDATED) or not plain_syntax(text, regions, s.start, s.end)]
