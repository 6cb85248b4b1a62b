"""lexicon.py's word frequencies and script test: the same values as wordfreq and as a character scan."""
import random

import pytest
from wordfreq import top_n_list, zipf_frequency

from cloud_edge_privacy.lexicon import OTHER_LANGUAGES, is_cjk, name_lists, zipf_of


@pytest.mark.parametrize("lang", ("en",) + OTHER_LANGUAGES)
def test_zipf_of_is_wordfreqs_value(lang):
    """Lower-case ASCII words are looked up directly, any other through wordfreq: list names, the language's
    common words, random letters (mostly unknown), and words with capitals, digits, accents and apostrophes."""
    rng = random.Random(5)
    first, last = name_lists()
    names = sorted({n.lower() for n in first | last})
    words = rng.sample(names, 3000) + top_n_list(lang, 3000)
    words += ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(1, 9))) for _ in range(2000)]
    words += ["Anna", "EMAIL", "b2b", "café", "don't", "x", "", "123", "co-op", "naïve"]
    fast = sum(w.isascii() and w.isalpha() and w.islower() for w in words)
    assert fast > 5000  # most went the direct way
    assert [zipf_of(w, lang) for w in words] == [zipf_frequency(w, lang) for w in words]


def test_is_cjk_finds_kana_han_and_hangul_anywhere():
    for text, want in [("", False), ("Anna Berg", False), ("Зоя", False), ("with 彭林 (HR)", True), ("さん", True),
                       ("지민", True), ("x" * 500 + "林", True), ("\u309f", True), ("\u3039", False)]:
        assert is_cjk(text) is want
        assert is_cjk(text) is any("\u3040" <= c <= "\u30ff" or "\u4e00" <= c <= "\u9fff" or "\uac00" <= c <= "\ud7a3"
                                   for c in text)
