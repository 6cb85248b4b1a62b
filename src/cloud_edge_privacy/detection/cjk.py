"""Proper nouns in Chinese, Japanese and Korean, as the languages' own pretrained analyzers read them.

The English models cannot read Han, Kana or Hangul (they tag whole clauses as names), and the learned NER trained
here reads them weakly.  Each of these languages has a morphological analyzer on PyPI with its weights packaged:

=========  ==================================  ==========================================================
language   analyzer (PyPI, pinned)             what is a proper noun
=========  ==================================  ==========================================================
Chinese    jieba 0.42.1 (MIT)                  POS ``nr`` person, ``ns`` place, ``nt`` organisation,
                                               ``nz`` other proper noun
Japanese   fugashi 1.5.2 + unidic-lite 1.0.8   UniDic ``固有名詞`` (proper noun): ``人名`` person, ``地名``
           (MIT; UniDic: BSD)                  place, ``組織`` organisation, ``一般`` other; a katakana
                                               word UniDic does not know (a foreign name or brand): other
Korean     kiwipiepy 0.24.1 + its model        Sejong ``NNP`` (proper noun; no subtype: MISC)
           (LGPL-3.0)
=========  ==================================  ==========================================================

A line is read by the analyzer of its script (Hangul: Korean; Kana: Japanese; Han alone: Chinese), and only
lines with such letters: an English prompt pays one regular-expression search.  Adjacent proper nouns of one
kind are one span (a UniDic surname and given name; "앙겔라 메르켈").  Each analyzer is loaded on first use, once
per recognizer, or all three at the detector's warm-up (about 6 s, before a gateway's first request).  Spans are
``cjk:<TAB category>``; the learned NER's label wins an overlap (merge priority).
"""
from __future__ import annotations

import re
import threading
from functools import lru_cache
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..errors import ModelFileError
from ..lexicon import CJK_SCRIPTS, KATAKANA_LETTERS
from ..spans import Span
from .recognizer import register_recognizer

_ANY_CJK = re.compile("[" + "".join(CJK_SCRIPTS.values()) + "]")
_HANGUL = re.compile("[" + CJK_SCRIPTS["Hangul"] + "]")
_KANA = re.compile("[" + CJK_SCRIPTS["Kana"] + "]")
_LINE = re.compile(r"[^\n]+")

# jieba's and UniDic's proper-noun kinds -> TAB categories
_JIEBA = {"nr": "PERSON", "nrfg": "PERSON", "nrt": "PERSON", "ns": "LOC", "nt": "ORG", "nz": "MISC"}
_UNIDIC = {"人名": "PERSON", "地名": "LOC", "組織": "ORG", "一般": "MISC"}

Found = List[Tuple[int, int, str]]  # (start, end, TAB category) in the line

# a line of each language, read once at warm-up
_WARM_UP_LINES = {"zh": "王小明住在北京。", "ja": "田中さんは東京に住んでいます。", "ko": "김민수는 서울에 산다."}


def language_of(line: str) -> Optional[str]:
    """"ko", "ja" or "zh" by the script of the line's letters (None: no Han, Kana or Hangul)."""
    if _HANGUL.search(line):
        return "ko"
    if _KANA.search(line):
        return "ja"
    return "zh" if _ANY_CJK.search(line) else None


def _import(module: str, package: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ModelFileError(f"the cjk recognizer needs {package} (a core dependency): reinstall the package "
                             f"(pip install .) ({exc})") from None


# jieba's dictionary tags some everyday words as persons (谢谢 "thanks", 明白 "understand", 文明, 小姐, 顾问): every
# two-character word it tags "nr" that is this common in Chinese (wordfreq's Zipf scale) is such a word (32 of its
# 32 such entries; names of people are at most 3.7: 李明 3.67, 刘德华 3.53)
EVERYDAY_CHINESE_ZIPF = 4.5


@lru_cache(maxsize=4096)
def _everyday_chinese(word: str) -> bool:
    """Whether ``word`` (a jieba person) is a two-character everyday word, not a name."""
    from wordfreq import zipf_frequency

    return len(word) == 2 and zipf_frequency(word, "zh") >= EVERYDAY_CHINESE_ZIPF


def _chinese() -> Callable[[str], Found]:
    jieba = _import("jieba", "jieba==0.42.1")
    posseg = _import("jieba.posseg", "jieba==0.42.1")
    jieba.setLogLevel(60)  # its dictionary-cache messages go to stderr otherwise
    tokenizer = posseg.POSTokenizer(jieba.Tokenizer())

    def read(line: str) -> Found:
        out, at = [], 0
        for pair in tokenizer.cut(line):
            start = line.find(pair.word, at)
            if start < 0:
                continue
            at = start + len(pair.word)
            if pair.flag in _JIEBA and not (_JIEBA[pair.flag] == "PERSON" and _everyday_chinese(pair.word)):
                out.append((start, at, _JIEBA[pair.flag]))
        return out
    return read


def _japanese() -> Callable[[str], Found]:
    fugashi = _import("fugashi", "fugashi==1.5.2 and unidic-lite==1.0.8")
    tagger = fugashi.Tagger()

    def read(line: str) -> Found:
        out, at = [], 0
        for word in tagger(line):
            start = line.find(word.surface, at)
            if start < 0:
                continue
            at = start + len(word.surface)
            if word.feature.pos2 == "固有名詞":
                out.append((start, at, _UNIDIC.get(word.feature.pos3, "MISC")))
            elif word.is_unk and _FOREIGN_WORD.fullmatch(word.surface):
                out.append((start, at, "MISC"))  # a katakana word UniDic does not know: a foreign name or brand
        return out
    return read


# A katakana word of three or more letters (the long-vowel mark included).  UniDic holds the katakana loanwords of
# everyday Japanese ("シンガーソングライター", "ドキュメンタリー") as common nouns; one it does not know is read as
# an unknown word, and is most often a foreign name, a brand or a title ("ギズモード", "ラテラリティ").
_FOREIGN_WORD = re.compile(f"[{KATAKANA_LETTERS}]{{3,}}")


def _korean() -> Callable[[str], Found]:
    kiwipiepy = _import("kiwipiepy", "kiwipiepy==0.24.1")
    kiwi = kiwipiepy.Kiwi()

    def read(line: str) -> Found:
        return [(t.start, t.start + t.len, "MISC") for t in kiwi.tokenize(line) if t.tag == "NNP"]
    return read


_ANALYZERS: Dict[str, Callable[[], Callable[[str], Found]]] = {"zh": _chinese, "ja": _japanese, "ko": _korean}


def _joined(line: str, found: Found) -> Found:
    """Adjacent spans of one category (nothing or spaces between them) as one."""
    out: Found = []
    for start, end, label in sorted(found):
        if out and out[-1][2] == label and not line[out[-1][1]:start].strip():
            out[-1] = (out[-1][0], end, label)
        else:
            out.append((start, end, label))
    return out


@register_recognizer("cjk", ("PERSON", "LOC", "ORG", "MISC"), {"cjk": 1.0})
class CjkProperNounRecognizer:
    """Proper nouns of Chinese, Japanese and Korean lines, by their languages' pretrained analyzers."""

    def __init__(self) -> None:
        self._loaded: Dict[str, Callable[[str], Found]] = {}
        self._lock = threading.Lock()

    def _analyzer(self, language: str) -> Callable[[str], Found]:
        if language not in self._loaded:
            self._loaded[language] = _ANALYZERS[language]()
        return self._loaded[language]

    def warm_up(self) -> None:
        """Load the three analyzers and read a line with each (jieba builds its prefix dictionary on its first
        cut), so that the first Chinese, Japanese or Korean request does not wait seconds for a load
        (``Detector.warm_up``)."""
        with self._lock:
            for language, line in _WARM_UP_LINES.items():
                self._analyzer(language)(line)
            _everyday_chinese("谢谢")  # wordfreq's Chinese table (and its own jieba dictionary)

    def analyze(self, text: str) -> List[Span]:
        if not _ANY_CJK.search(text):
            return []
        with self._lock:  # the analyzers are loaded once, and jieba's tokenizer is not safe across threads
            return self._spans(text)

    def _spans(self, text: str) -> List[Span]:
        spans = []
        for m in _LINE.finditer(text):
            language = language_of(m.group())
            if language is None:
                continue
            line = m.group()
            for start, end, label in _joined(line, self._analyzer(language)(line)):
                # a proper noun of the analyzer's script: Latin words in the line are the other recognizers'
                if _ANY_CJK.search(line[start:end]):
                    spans.append(Span(m.start() + start, m.start() + end, label, 0.7, f"cjk:{label}"))
        return spans
