"""The encoder recognizer: a small pretrained transformer (all-MiniLM-L6-v2, cut to a few layers) fine-tuned as a
BIO token classifier over TAB's categories by ``scripts/train_encoder_ner.py``, run as an int8 ONNX model.

It reads words in context (an encoder, not a word list), so "score" in "APACHE II score" or ``var`` in code
is not a name while an employer in a CV is an organisation.  Inference needs ONNX Runtime and the ``tokenizers``
package (the ``[encoder]`` extra), never torch.  Long texts are read in overlapping windows of the length the
model was trained on; each token's label comes from the window where it is furthest from an edge.  A span is
widened to whole words, so every word it touches is masked.  Spans with letters of other scripts than Latin (CJK,
Arabic, Cyrillic...) are dropped: the model was trained on Latin-script text only, and there its labels are noise.
"""
from __future__ import annotations

import bisect
import json
import re
import threading
import unicodedata
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..errors import ModelFileError
from ..spans import Span
from ..vocabulary import TAB_CATEGORIES
from .recognizer import ALL_TAB, Reads, register_recognizer

MODEL_DIR = Path(__file__).with_name("encoder_ner_model")
_lock = threading.Lock()
_OVERLAP = 32  # tokens shared by two neighbouring windows
# A token is private when the model's probability of "not private" (O) is below this; its category is then the
# likeliest private label.  Above 0.5 it leans to recall: 0.8 was chosen on cross-validation fold 0 of the real
# development prompts (0.5 / 0.7 / 0.8 / 0.85 / 0.9 tried with the model trained without fold 0; fully masked units
# 0.573 / 0.691 / 0.773 / 0.827 / 0.864, token precision 0.390 / 0.345 / 0.318 / 0.299 / 0.271; above 0.8 trap words
# such as "APACHE" were flagged), which makes the fold-0 figures optimistic; folds 1-4 were not looked at for it
# (scripts/eval_encoder_ner.py reports them apart).
O_THRESHOLD = 0.8
# ONNX Runtime's threads within one run.  The detector runs the encoder on a worker thread beside the spaCy models
# (it is declared concurrent): on the 2-core reference machine a second ONNX thread then only contends with them
# (p50 of the candidates per short prompt: 17.4 ms with 1, 23.2 with 2, 23.6 in turn).  The logits are bitwise the
# same for any count, so spans do not depend on it (a test).
THREADS = 1


def bio_labels() -> List[str]:
    """``O`` then ``B-``/``I-`` of every TAB category (the classifier's output order)."""
    return ["O"] + [f"{p}-{c}" for c in sorted(TAB_CATEGORIES) for p in ("B", "I")]


def fold_model_dir(fold: int) -> Path:
    """Where ``scripts/train_encoder_ner.py --fold K`` saves the model trained without fold K."""
    from ..models.catalog import cache_dir

    return cache_dir() / "encoder_ner_folds" / f"fold{fold}"


class _Model:
    """One loaded model: the ONNX session, the tokenizer and the label list."""

    def __init__(self, path: Path, threads: int) -> None:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ModelFileError(f"the encoder recognizer needs onnxruntime and tokenizers: "
                                 f"pip install 'cloud-edge-privacy[encoder]' ({exc})") from exc
        cfg = json.loads((path / "config.json").read_text(encoding="utf-8"))
        self.labels: List[str] = list(cfg["labels"])
        self.max_len = int(cfg["max_len"])
        self.tok = Tokenizer.from_file(str(path / "tokenizer.json"))
        self.tok.no_truncation()
        self.tok.no_padding()
        self.cls, self.sep = self.tok.token_to_id("[CLS]"), self.tok.token_to_id("[SEP]")
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        self.sess = ort.InferenceSession(str(path / "model.onnx"), opts, providers=["CPUExecutionProvider"])


@lru_cache(maxsize=8)
def load_encoder(path: str, threads: int = THREADS) -> _Model:
    """Load a model once per process; a clear error if it was not built."""
    p = Path(path)
    missing = [f for f in ("model.onnx", "tokenizer.json", "config.json") if not (p / f).is_file()]
    if missing:
        raise ModelFileError(f"{path}: the encoder NER model is missing {missing}; build it with "
                             f".venv/bin/python scripts/train_encoder_ner.py --fold all")
    with _lock:
        return _Model(p, threads)


def _windows(n: int, width: int) -> List[Tuple[int, int, int, int]]:
    """(start, end, keep_from, keep_to) token windows over ``n`` tokens: each token is kept from one window."""
    if n <= width:
        return [(0, n, 0, n)]
    step = width - _OVERLAP
    out, start = [], 0
    while True:
        end = min(n, start + width)
        keep_from = 0 if start == 0 else start + _OVERLAP // 2
        keep_to = n if end == n else end - _OVERLAP // 2
        out.append((start, end, keep_from, keep_to))
        if end == n:
            return out
        start += step


def _softmax(x: Any) -> Any:
    import numpy as np

    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


@register_recognizer("encoder_ner", ALL_TAB, {"encoder": 1.5}, Reads.TOKENS, concurrent=True)
class EncoderNerRecognizer:
    """Private items as the fine-tuned encoder sees them in context.  ``source`` is ``encoder:<TAB type>``."""

    def __init__(self, path: Optional[str] = None, threads: int = THREADS,
                 o_threshold: float = O_THRESHOLD, drop_public_institutions: bool = False) -> None:
        if not 0.0 < o_threshold <= 1.0:
            raise ValueError(f"encoder_ner o_threshold must be in (0, 1], got {o_threshold}")
        self.path = str(path or MODEL_DIR)
        self.threads = threads
        self.o_threshold = o_threshold
        self.drop_public = drop_public_institutions

    def check(self) -> None:
        """Raise :class:`ModelFileError` now if the model is missing (presets call this when built)."""
        load_encoder(self.path, self.threads)

    def analyze(self, text: str) -> List[Span]:
        return self.analyze_many([text])[0]

    def analyze_many(self, texts: Sequence[str]) -> List[List[Span]]:
        """Each paragraph read on its own: a request's fields are joined by blank lines, and a message must be
        labelled the same whatever the other fields of the request (the earlier turns of a conversation)."""
        pieces = [(i, m.start(), m.group()) for i, t in enumerate(texts) for m in _PARAGRAPH.finditer(t)]
        found = self._analyze_paragraphs([p[2] for p in pieces])
        out: List[List[Span]] = [[] for _ in texts]
        for (i, off, _), spans in zip(pieces, found):
            out[i].extend(Span(sp.start + off, sp.end + off, sp.category, sp.score, sp.source) for sp in spans)
        return out

    def _analyze_paragraphs(self, texts: Sequence[str]) -> List[List[Span]]:
        """Every text tokenized, cut into windows, each window run alone, labels mapped back to words."""
        import numpy as np

        m = load_encoder(self.path, self.threads)
        # one text a call: encode_batch lets go of the GIL, and on a worker thread getting it back can take the
        # interpreter's whole switch interval (5 ms) while the detector reads on in Python
        encs = [m.tok.encode(t, add_special_tokens=False) for t in texts]
        width = m.max_len - 2
        jobs = [(i, w) for i, e in enumerate(encs) for w in _windows(len(e.ids), width) if e.ids]
        probs: Dict[int, Any] = {i: np.zeros((len(e.ids), len(m.labels)), dtype=np.float32)
                                 for i, e in enumerate(encs)}
        # one window per run: the int8 model quantizes its activations with a range taken over the whole input, so
        # padding and the other texts of a batch would change a text's labels (its spans must not depend on them)
        for b in range(0, len(jobs)):
            chunk = jobs[b:b + 1]
            n = max(w[1] - w[0] for _, w in chunk) + 2
            ids = np.zeros((len(chunk), n), dtype=np.int64)
            mask = np.zeros((len(chunk), n), dtype=np.int64)
            for r, (i, (s, e, _, _)) in enumerate(chunk):
                ids[r, :e - s + 2] = [m.cls, *encs[i].ids[s:e], m.sep]
                mask[r, :e - s + 2] = 1
            p = _softmax(m.sess.run(["logits"], {"input_ids": ids, "attention_mask": mask})[0])
            for r, (i, (s, e, kf, kt)) in enumerate(chunk):
                probs[i][kf:kt] = p[r, 1 + kf - s:1 + kt - s]
        out = [self._spans(t, encs[i].offsets, probs[i], m.labels, self.o_threshold) for i, t in enumerate(texts)]
        if self.drop_public:
            # a fragment ("Kingdom", "United", "Cassation") by the whole name; a place inside an institution's name
            # ("Izmir" in "District Court of Izmir") is still a place, a word of a State's name ("United") is not
            out = [_without_public(t, spans) for t, spans in zip(texts, out)]
        return out

    @staticmethod
    def _spans(text: str, offsets: Sequence[Tuple[int, int]], probs: Any, labels: Sequence[str],
               o_threshold: float = O_THRESHOLD) -> List[Span]:
        """Consecutive tokens of one category -> one span (a ``B-`` starts a new one), widened to whole words."""
        out: List[Span] = []
        cur: Optional[List[Any]] = None  # [start, end, category, [scores]]
        for (s, e), p in zip(offsets, probs):
            k = 1 + int(p[1:].argmax()) if p[0] < o_threshold else 0
            if _BRACKET.fullmatch(text[s:e]):
                k = 0  # a bracket or quote ends a span: "Smith (john.smith@..." is a name, then an address
            if k == 0 or e <= s:
                if k == 0 and cur is not None:
                    out.append(_widen(text, cur))
                    cur = None
                continue
            tag, cat = labels[k].split("-", 1)
            if cur is not None and cat == cur[2] and (tag == "I" or s <= cur[1]):
                cur[1] = max(cur[1], e)
                cur[3].append(float(p[k]))
                continue
            if cur is not None:
                out.append(_widen(text, cur))
            cur = [s, e, cat, [float(p[k])]]
        if cur is not None:
            out.append(_widen(text, cur))
        out = [sp for sp in out if sp is not None]
        # the model read Latin-script texts only: on other scripts its labels are noise (a single "天" a name, an
        # Arabic or Russian sentence a person); the name recognizers read those scripts
        return [sp for sp in out if not any(_wide(c) or not _latin(c) for c in text[sp.start:sp.end])]


def _without_public(text: str, spans: List[Span]) -> List[Span]:
    """``spans`` less those of a public institution or State, alone or as a fragment of one."""
    if not spans:
        return spans
    words = _words(text)
    return [sp for sp in spans if not (_public(text[sp.start:sp.end], sp.category) or (
        sp.category in ("ORG", "LOC") and _public(_name_phrase(text, sp.start, sp.end, words), sp.category)))]


def _words(text: str) -> Tuple[List[Tuple[int, int]], List[int], List[int]]:
    """The runs of non-space characters of ``text``, with their starts and their ends (both in order)."""
    words = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
    return words, [a for a, _ in words], [b for _, b in words]


def _public(surface: str, category: str) -> bool:
    """A public institution or State (see :func:`~.public_parties.is_public_institution`); the encoder calls a
    State named as a party ("the United Kingdom", "of Turkey") an organisation.  Not its rule for court headings
    in capitals: an organisation in capitals ("AIDA", a college's name) in a prompt is one."""
    from .public_parties import is_public_institution, named_public_body

    surface = re.sub(r"^(?:of|in|against)\s+", "", surface)
    if surface.isupper():
        return category in ("ORG", "LOC") and named_public_body(surface)  # "NHS", "WHO": named bodies, in any case
    return is_public_institution(surface, category) or (category == "ORG" and is_public_institution(surface, "LOC"))


_CAPITALISED = re.compile(r"[A-Z][\w'\u2019-]*")


def _name_phrase(text: str, start: int, end: int,
                 runs: Optional[Tuple[List[Tuple[int, int]], List[int], List[int]]] = None) -> str:
    """The run of capitalised words (joined by "and", "of", "for", "the") around ``text[start:end]``: the whole
    name a fragment belongs to ("Kingdom" -> "United Kingdom", "Cassation" -> "Court of Cassation").  ``runs``:
    :func:`_words` of the text, when the caller has them (one reading for all of a text's spans)."""
    words, starts, ends = runs if runs is not None else _words(text)
    lo, hi = bisect.bisect_right(ends, start), bisect.bisect_left(starts, end) - 1  # the words it overlaps
    if lo > hi:
        return text[start:end]

    def cap(i: int) -> bool:
        return bool(_CAPITALISED.fullmatch(text[words[i][0]:words[i][1]].rstrip(".,;:")))

    def link(i: int) -> bool:
        return text[words[i][0]:words[i][1]] in ("and", "of", "for", "the")

    def ends(i: int) -> bool:
        return text[words[i][0]:words[i][1]].endswith((".", ",", ";", ":"))

    while lo > 0 and not ends(lo - 1) and (cap(lo - 1) or (link(lo - 1) and lo > 1 and cap(lo - 2)
                                                          and not ends(lo - 2))):
        lo -= 1
    while hi + 1 < len(words) and not ends(hi) and (
            cap(hi + 1) or (link(hi + 1) and not ends(hi + 1) and hi + 2 < len(words) and cap(hi + 2))):
        hi += 1
    return re.sub(r"^The\s+", "", text[words[lo][0]:words[hi][1]].rstrip(".,;:"))


_PARAGRAPH = re.compile(r"\S(?:.|\n(?![ \t]*\n))*")  # text between blank lines


_BRACKET = re.compile(r"[()\[\]{}<>\"'`]+")


def _latin(c: str) -> bool:
    """Not a letter, or a letter of the Latin script (ASCII, Latin-1, Latin Extended, Latin Extended Additional)."""
    return not c.isalpha() or c <= "\u024f" or "\u1e00" <= c <= "\u1eff"


def _wide(c: str) -> bool:
    """A wide or fullwidth character (CJK ideographs, kana, hangul, fullwidth forms)."""
    return unicodedata.east_asian_width(c) in ("W", "F")


def _in_word(c: str) -> bool:
    """A letter or digit that continues a word (a CJK character is a word by itself: never widened over)."""
    return c.isalnum() and not _wide(c)


def _widen(text: str, cur: List[Any]) -> Optional[Span]:
    s, e, cat, scores = cur
    while s > 0 and _in_word(text[s - 1]) and (_in_word(text[s]) or text[s] in _JOIN):
        s -= 1  # a word piece grows to its word; a lone "," or "." never grows into the word before it
    while e < len(text) and _in_word(text[e]) and (_in_word(text[e - 1]) or text[e - 1] in _JOIN):
        e += 1
    while e > s and (text[e - 1] in _TRAIL + _JOIN or text[e - 1].isspace()):
        e -= 1  # "Karen Anderson," is the name; a word piece of punctuation joined it
    if e > s and text[e - 1] == "." and not _ABBREV.search(text, s, e):
        e -= 1  # a sentence's full stop, not "Inc." or "Dr."
    while s < e and (text[s] in _TRAIL + "." or text[s].isspace()):
        s += 1
    if not any(_in_word(c) for c in text[s:e]):
        return None  # punctuation alone is nobody
    return Span(s, e, cat, round(sum(scores) / len(scores), 3), f"encoder:{cat}")


_TRAIL = ",;:!?"
_JOIN = "-'\u2019"  # inside a word: "Smithers-Jones", "O'Neil"
_ABBREV = re.compile(r"(?:^|(?<=\W))[A-Za-z]{1,3}\.$")
