"""The hand-written word lists are data files (src/cloud_edge_privacy/wordlists/*.txt), one list per concept: each
is read by some module, loads, has a header saying what it is, where it comes from and who reads it, and holds
no blank, padded or duplicate entry; an unknown list is a clear error naming the file."""
import re

import pytest

from conftest import REPO
from cloud_edge_privacy import wordlists
from cloud_edge_privacy.errors import WordListError

PKG = REPO / "src" / "cloud_edge_privacy"
FILES = sorted((PKG / "wordlists").glob("*.txt"))
NAMES = [f.stem for f in FILES]


def test_the_lists_are_the_files_of_the_folder():
    assert FILES and wordlists.names() == tuple(NAMES)
    assert all(wordlists.path_of(n) == f.resolve() for n, f in zip(NAMES, FILES))


@pytest.fixture(scope="module")
def package_source() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in PKG.rglob("*.py"))


@pytest.mark.parametrize("name", NAMES)
def test_every_list_is_read_by_some_module(name, package_source):
    assert re.search(rf"""["']{name}["']""", package_source), f"wordlists/{name}.txt is read by no module"


@pytest.mark.parametrize("name", NAMES)
def test_every_list_loads_with_a_header_and_no_blank_or_duplicate_entry(name):
    lines = wordlists.path_of(name).read_text(encoding="utf-8").split("\n")
    assert lines[-1] == "", f"{name}.txt does not end with a newline"
    header = []
    for line in lines:
        if not line.startswith("#"):
            break
        header.append(line)
    text = "\n".join(header)
    assert len(header) >= 3 and "Source:" in text and "Read by:" in text, f"{name}.txt: header incomplete"
    found = wordlists.entries(name)
    assert len(found) >= 5, f"{name}.txt: {len(found)} entries (a handful stays in Python)"
    assert all(e and e == e.strip() and "\t" not in e for e in found), f"{name}.txt: blank or padded entry"
    duplicates = sorted({e for e in found if found.count(e) > 1})
    assert not duplicates, f"{name}.txt: duplicate entries {duplicates}"
    assert wordlists.words(name) == frozenset(found)
    assert wordlists.words(name) is wordlists.words(name)  # read once


def test_an_unknown_list_is_an_error_naming_the_file():
    with pytest.raises(WordListError, match=r"no word list 'no_such_list': .*wordlists/no_such_list\.txt does not exist"):
        wordlists.words("no_such_list")
    with pytest.raises(LookupError):  # a WordListError is a LookupError too
        wordlists.entries("../errors")


def test_an_alternation_matches_each_entry_literally_in_file_order():
    assert wordlists.escape("St.") == r"St\." and wordlists.escape("sp. z o.o.") == r"sp\. z o\.o\."
    assert wordlists.escape("& Co") == "& Co" and wordlists.escape("d-dimer") == "d-dimer"
    body = wordlists.alternation("street_types_trailing")
    assert body.startswith(r"Street|St\.|St|Road|")  # "St." before "St": the order the pattern was typed in
    for name in ("street_types_trailing", "legal_forms", "demonyms", "top_level_domains"):
        rx = re.compile(f"(?:{wordlists.alternation(name)})")
        assert all(rx.fullmatch(e) for e in wordlists.entries(name)), name


def test_institution_words_stay_distinct_lists():
    """Five lists of institution words, in different case and for different rules; merged, the detector's
    spans would change (what each holds that the others lack)."""
    lists = {n: wordlists.words(n) for n in NAMES if n.startswith("institution_words_")}
    assert len(lists) == 5
    lower = {n: frozenset(w.lower() for w in ws) for n, ws in lists.items()}
    assert len(set(lower.values())) == 5
