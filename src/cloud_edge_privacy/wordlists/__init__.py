"""The package's hand-written word lists, as data: one file per concept, ``wordlists/<name>.txt``.

Each file is UTF-8, one entry per line, exactly as written (no padding, no blank line, no duplicate), with a
header of ``#`` comment lines saying what the concept is, where its words come from and which modules read it;
a ``#`` line further down is a comment too.  The entries keep the order they were typed in: a regex alternation
built from a list (:func:`alternation`) tries them in that order, so the file's order is part of its meaning
where one entry is a prefix of another ("St." before "St").

Read once per process (cached); a missing or unknown list raises :class:`~cloud_edge_privacy.errors.WordListError`
naming the file.  A foundation module like ``vocabulary.py`` and ``lexicon.py``, which read their lists here too:
it imports nothing of the package but the errors.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import FrozenSet, Tuple

from ..errors import WordListError

FOLDER = Path(__file__).resolve().parent
SUFFIX = ".txt"
# the characters a regex reads as syntax outside a character class: escaped in an alternation of entries
_REGEX_SPECIAL = frozenset("\\.^$*+?{}[]|()")


def path_of(name: str) -> Path:
    """The file of the list ``name`` (which need not exist)."""
    return FOLDER / f"{name}{SUFFIX}"


def names() -> Tuple[str, ...]:
    """The names of every list, sorted."""
    return tuple(sorted(p.stem for p in FOLDER.glob(f"*{SUFFIX}")))


@lru_cache(maxsize=None)
def entries(name: str) -> Tuple[str, ...]:
    """The entries of the list ``name`` in the order of its file."""
    path = path_of(name)
    if not name or Path(name).name != name or not path.is_file():
        raise WordListError(f"no word list {name!r}: {path} does not exist "
                            f"(the lists are the files of {FOLDER}: {', '.join(names())})")
    with path.open(encoding="utf-8") as f:
        return tuple(line.rstrip("\n") for line in f if not line.startswith("#"))


@lru_cache(maxsize=None)
def words(name: str) -> FrozenSet[str]:
    """The entries of the list ``name`` as a set."""
    return frozenset(entries(name))


def escape(entry: str) -> str:
    """``entry`` as a regex matching it literally, escaping only what a regex reads as syntax (``re.escape`` also
    escapes spaces and hyphens): "St." -> ``St\\.``."""
    return "".join("\\" + c if c in _REGEX_SPECIAL else c for c in entry)


@lru_cache(maxsize=None)
def alternation(name: str) -> str:
    """The entries of the list ``name`` as the body of a regex alternation, in file order, each matched
    literally: "Street|St\\.|St|Road..." (put it in a group: ``(?:`` + ... + ``)``)."""
    return "|".join(escape(e) for e in entries(name))
