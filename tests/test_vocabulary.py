"""Issue 21 item 5: one vocabulary.  The egress guard, detection and the pseudonym operator read the same
title list (they used to disagree on "Lord" and "Prof"), and the TAB categories and month names have one
definition."""
import re

import pytest

from cloud_edge_privacy import vocabulary as v
from conftest import REPO


@pytest.mark.parametrize("title", sorted(v.TITLES))
def test_guard_and_detection_agree_on_every_title(title):
    from cloud_edge_privacy.detection import pipeline as detection_pipeline
    from cloud_edge_privacy.detection.regex_recognizer import RegexRecognizer
    from cloud_edge_privacy.core.egress import _name_tokens

    text = f"{title.capitalize()} Kowalski signed the report."
    spans = [s for s in RegexRecognizer().analyze(text) if s.source == "regex:titled_name"]
    assert [text[s.start:s.end] for s in spans] == [f"{title.capitalize()} Kowalski"]   # detection: a name cue
    assert _name_tokens(f"{title.capitalize()} Kowalski", set()) == ["Kowalski"]        # guard: not identifying
    assert title in detection_pipeline._TITLES and f"{title}." in detection_pipeline._TITLES  # propagation strips it


def test_pseudonyms_keep_or_translate_every_title():
    from cloud_edge_privacy.desensitization import pseudonyms

    assert v.TITLES <= pseudonyms._TITLES and set(v.FOREIGN_TITLES) <= pseudonyms._TITLES
    assert pseudonyms._TITLE_AS["herr"] == "Mr"


def test_one_definition_of_categories_and_months():
    from cloud_edge_privacy.desensitization import dp_mechanisms, generalization, surrogates
    from cloud_edge_privacy.detection import recognizer
    from cloud_edge_privacy.datasets.tab import ENTITY_TYPES

    assert ENTITY_TYPES is v.TAB_CATEGORIES is dp_mechanisms.TAB_CATEGORIES is recognizer.ALL_TAB
    assert len(v.TAB_CATEGORIES) == 8 and surrogates.MONTHS == list(v.MONTHS)
    assert generalization._MONTHS == v.MONTH_ALTERNATION
    # no module of the core path spells the category tuple or the month list out again
    spelled = re.compile(r'"PERSON", "CODE", "LOC", "ORG", "DATETIME"|"January", "February", "March"|'
                         r"January\|February\|March\|April\|May\|June")
    allowed = {"vocabulary.py",
               "prism_gate.py",  # PRISM (measured this session; its owner moves it to the vocabulary)
               "user_prompts.py"}  # the generated evaluation set's templates (eval_sets/)
    copies = [p.relative_to(REPO).as_posix() for p in (REPO / "src" / "cloud_edge_privacy").rglob("*.py")
              if p.name not in allowed and spelled.search(p.read_text(encoding="utf-8"))]
    assert copies == []


def test_whitespace_tolerant_surface_regex():
    from cloud_edge_privacy.spans import surface_pattern

    assert surface_pattern("Anna  Berg").search("met Anna\nBerg today")
    assert not surface_pattern("Ann").search("Anna Berg")
    assert v.tolerant_body("a.b c") == r"a\.b\s+c"


def test_find_surface_finds_what_the_surface_pattern_finds():
    """Co-reference and the egress guard find a form without compiling a pattern; the same matches, on random
    texts of letters, digits, underscores, hyphens, whitespace (a no-break and a thin space too), non-ASCII letters
    and digits, and the characters whose case folding differs (the dotted and dotless i, the long s, the Kelvin
    sign), in both cases, with word or digit edges."""
    import random
    import re

    from cloud_edge_privacy.spans import find_surface
    from cloud_edge_privacy.vocabulary import tolerant_body

    rng = random.Random(11)
    checked = 0
    for _ in range(20_000):
        text = "".join(rng.choice("aAbBkKsSiI _-\n\t.1éÉ\u00a0\u2009\u0663\u0130\u0131\u017f\u212a")
                       for _ in range(rng.randint(0, 25)))
        surface = "".join(rng.choice("aAbBkKsSiI -1_\néÉ\u0663") for _ in range(rng.randint(1, 6)))
        if not surface.split():
            continue
        for ignore_case in (False, True):
            for digits in (False, True):
                edges = (r"(?<!\d)", r"(?!\d)") if digits else (r"(?<!\w)", r"(?!\w)")
                pattern = re.compile(edges[0] + tolerant_body(surface) + edges[1], re.IGNORECASE if ignore_case else 0)
                want = [m.span() for m in pattern.finditer(text)]
                assert find_surface(text, surface, ignore_case, digits) == want, (text, surface, ignore_case, digits)
                checked += bool(want)
    assert checked > 4000  # the texts did contain the surfaces


def test_find_surface_on_a_name_across_a_line_break():
    from cloud_edge_privacy.spans import find_surface

    text = "met Anna\nBerg today; ANNA BERG later, Annabel Berg never, Anna Bergström neither"
    assert find_surface(text, "Anna Berg") == [(4, 13)]
    assert find_surface(text, "anna  berg", ignore_case=True) == [(4, 13), (21, 30)]
    assert find_surface("Zoë Berg and zoë berg", "Zoë Berg", ignore_case=True) == [(0, 8), (13, 21)]  # not ASCII


def test_literal_trie_matches_as_the_alternation_longest_first():
    """Random lower-case words (prefixes of each other, spaces and hyphens inside), in a pattern whose tail makes
    the engine backtrack into the words: the same matches as the plain alternation, longest first."""
    import random
    import re

    from cloud_edge_privacy.vocabulary import literal_trie

    rng = random.Random(4)
    checked = 0
    for _ in range(300):
        words = {"".join(rng.choice("ab -") for _ in range(rng.randint(1, 5))).strip(" -") or "a" for _ in range(8)}
        plain = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
        for tail in (r"\b\s?\d", r"\b"):  # one backtracks into the words, one takes the first that fits
            want = re.compile(rf"(?i)\b(?:{plain}){tail}")
            got = re.compile(rf"(?i)\b(?:{literal_trie(words)}){tail}")
            for _ in range(30):
                text = "".join(rng.choice("aAb -1.") for _ in range(rng.randint(0, 20)))
                spans = [m.span() for m in want.finditer(text)]
                assert [m.span() for m in got.finditer(text)] == spans, (words, text, tail)
                checked += bool(spans)
    assert checked > 200  # texts that did hold a match
