"""Per-span decision with learned weights: which candidate spans of all recognizers to keep.

Overlapping spans of all recognizers form one candidate.  Gradient-boosted trees (scikit-learn's
``HistGradientBoostingClassifier``, fitted by ``scripts/train_decider.py`` on out-of-fold predictions of the real
development prompts and on TAB train, exported to ``learned/model/decider.json``) map the candidate's features --
which recognizers found it and with which label, the encoder's confidence, how many families agree, its case,
shape and length, how common its words are in English, the line it sits in and its neighbours -- to the
probability that it is private.  A preset keeps the candidates at or above its threshold: the default's is low
(recall first: a privacy gateway fails toward masking), the precision preset's higher.  Both thresholds are
chosen out of fold (see the script).  Inference walks every tree at once with numpy; no model runtime.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Mapping, Sequence, Tuple

import numpy as np

from .. import wordlists
from ..errors import ModelFileError
from ..spans import Span, is_secret

# Bumped whenever ``features`` changes: cached training rows of another version are recomputed.
FEATURES_VERSION = 2
# Fitted together with the learned model they were calibrated for, and stored next to it.
WEIGHTS = Path(__file__).with_name("learned") / "model" / "decider.json"
_WORD = re.compile(r"[^\W\d_]+")
# Words naming an office, a body or an enactment.  "Principal Public Prosecutor", "Immigration Appeals Board" or
# "Military Service Act" name no one (TAB leaves them unmasked); "Izmir Public Prosecutor" names a place with it.
_INSTITUTION = re.compile(r"\b(?:" + wordlists.alternation("institution_words_offices") + r")\b")


def source_key(source: str) -> str:
    """``names:list`` from ``names:list``, ``learned:PERSON`` from ``learned:PERSON``, ``secret`` for secrets."""
    if source.startswith("secret:"):
        return "secret"
    parts = source.split(":")
    return ":".join(parts[:2])


def family(source: str) -> str:
    return source_key(source).split(":")[0]


def group_overlapping(spans: Sequence[Span]) -> List[List[Span]]:
    """Connected groups of overlapping spans, in text order."""
    groups: List[List[Span]] = []
    end = -1
    for s in sorted(spans, key=lambda s: (s.start, -s.end)):
        if groups and s.start < end:
            groups[-1].append(s)
            end = max(end, s.end)
        else:
            groups.append([s])
            end = s.end
    return groups


def _word_char(c: str) -> bool:
    return c.isalnum() or c == "_"


def _as_word(text: str, form: str) -> bool:
    """Whether ``form`` occurs in ``text`` between two word boundaries (regex ``\\b``, without compiling one
    pattern per candidate)."""
    if not form:
        return False
    first, last = _word_char(form[0]), _word_char(form[-1])
    i = text.find(form)
    while i >= 0:
        j = i + len(form)
        before = i > 0 and _word_char(text[i - 1])
        after = j < len(text) and _word_char(text[j])
        if before != first and after != last:
            return True
        i = text.find(form, i + 1)
    return False


@lru_cache(maxsize=1024)
def _line(line: str) -> Tuple[int, float, float]:
    """A line's word count (at least 1), share of capitalised words and separators (commas, bars, dots; 20 = 1).
    Cached: the candidates of one long paragraph share it."""
    words = _WORD.findall(line) or [""]
    return len(words), sum(w[:1].isupper() for w in words) / len(words), min(sum(line.count(c) for c in ",|·"), 20) / 20


def features(text: str, group: Sequence[Span]) -> Dict[str, float]:
    """Named features of one candidate (a group of overlapping spans)."""
    from ..lexicon import english_zipf

    start, end = min(s.start for s in group), max(s.end for s in group)
    surface = text[start:end]
    words = _WORD.findall(surface)
    letters = "".join(words)
    fams = {family(s.source) for s in group}
    f: Dict[str, float] = {f"src={source_key(s.source)}": 1.0 for s in group}
    f.update({f"fam={x}": 1.0 for x in fams})
    f.update({f"cat={s.category}": 1.0 for s in group})
    f["n_families"] = min(len(fams), 4) / 4
    f["n_sources"] = len({s.source for s in group}) / 4
    f["n_spans"] = math.log1p(len(group))
    f["lower"] = float(bool(letters) and letters.islower())
    f["upper"] = float(len(letters) > 1 and letters.isupper())
    f["title"] = float(bool(words) and all(w[:1].isupper() for w in words) and not f["upper"])
    f["digit"] = float(any(c.isdigit() for c in surface))
    f["non_latin"] = float(any(ord(c) > 0x24f for c in letters))
    f["one_word"] = float(len(words) <= 1)
    f["long"] = float(len(words) >= 4)
    f["n_words"] = math.log1p(len(words))
    zipfs = [english_zipf(w.lower()) for w in words] or [0.0]
    f["common_word"] = float(len(words) == 1 and zipfs[0] >= 4.5)
    f["min_zipf"] = min(zipfs) / 8
    f["mean_zipf"] = sum(zipfs) / len(zipfs) / 8
    f["everyday_share"] = sum(z >= 3.5 for z in zipfs) / len(zipfs)
    f["unknown_word"] = float(min(zipfs) == 0)
    f["sentence_start"] = float(start == 0 or bool(re.search(r"[.!?\n:]\s*$", text[max(0, start - 3):start])))
    # the encoder's own confidence, and how much of the candidate it covers
    enc = [s.score for s in group if family(s.source) == "encoder"]
    f["encoder_score"] = max(enc, default=0.0)
    f["encoder_cover"] = sum(s.end - s.start for s in group if family(s.source) == "encoder") / (end - start)
    # the line: a table row or a word list ("Cash, Share Capital, Accounts Receivable") is not a name
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    n_line, f["line_title"], f["line_separators"] = _line(text[line_start:line_end if line_end >= 0 else len(text)])
    f["line_words"] = math.log1p(n_line) / 5
    f["line_share"] = len(words) / n_line
    f["text_length"] = math.log1p(len(text)) / 10
    # a form of it in lower case elsewhere (an everyday word), and how often it recurs
    lower = surface.lower()
    f["lower_elsewhere"] = float(lower != surface and _as_word(text, lower))
    f["repeats"] = math.log1p(text.count(surface))
    before, after = _WORD.findall(text[max(0, start - 30):start]), _WORD.findall(text[end:end + 30])
    f["prev_lower"] = float(bool(before) and before[-1].islower())
    f["prev_zipf"] = english_zipf(before[-1].lower()) / 8 if before else 0.0
    f["next_lower"] = float(bool(after) and after[0].islower())
    f["next_zipf"] = english_zipf(after[0].lower()) / 8 if after else 0.0
    if _INSTITUTION.search(surface):
        # an institution, and whether every other capitalised word is an everyday one (no proper name in it)
        proper = [w for w in words if w[:1].isupper() and not _INSTITUTION.fullmatch(w) and english_zipf(w.lower()) < 3.5]
        f["institution"] = 1.0
        f["generic_institution"] = float(not proper)
    return f


def feature_matrix(names: Sequence[str], rows: Sequence[Mapping[str, float]]) -> Any:
    """Feature rows as a matrix with ``names`` as columns (features not among them are ignored)."""
    index = {k: i for i, k in enumerate(names)}
    x = np.zeros((len(rows), len(names)))
    for r, feats in enumerate(rows):
        for k, v in feats.items():
            i = index.get(k)
            if i is not None:
                x[r, i] = v
    return x


@dataclass(frozen=True)
class DeciderModel:
    """Fitted boosted trees over named features, and the presets' thresholds.  The nodes of all trees lie in
    flat arrays (``roots`` says where each tree starts; children are indices into the same arrays; a leaf points
    to itself), so that ``depth`` steps walk every candidate down every tree at once."""

    names: Tuple[str, ...]
    baseline: float
    roots: Any
    feature: Any
    threshold: Any
    left: Any
    right: Any
    value: Any
    depth: int
    thresholds: Mapping[str, float]
    families: frozenset  # the recognizer families the trees were fitted on

    def probabilities(self, rows: Sequence[Mapping[str, float]]) -> Any:
        """The probability that each candidate is private."""
        if not rows:
            return np.zeros(0)
        x = feature_matrix(self.names, rows).ravel()
        n_trees = len(self.roots)
        node = np.tile(self.roots, len(rows))  # (candidate, tree) flat
        offset = np.repeat(np.arange(len(rows)) * len(self.names), n_trees)
        walking = np.arange(node.size)  # those not at a leaf yet: most trees are far shallower than the deepest
        for _ in range(self.depth):
            at = node[walking]
            go_left = x[offset[walking] + self.feature[at]] <= self.threshold[at]
            step = np.where(go_left, self.left[at], self.right[at])
            node[walking] = step
            walking = walking[step != at]  # a leaf is its own child
            if not walking.size:
                break
        node = node.reshape(len(rows), n_trees)
        z = self.baseline + self.value[node].sum(axis=1)
        return 1.0 / (1.0 + np.exp(-np.clip(z, -30.0, 30.0)))

    def probability(self, feats: Mapping[str, float]) -> float:
        return float(self.probabilities([feats])[0])


def model_from_json(raw: Mapping[str, Any], where: str = "decider.json") -> DeciderModel:
    """A :class:`DeciderModel` from its JSON form: ``features``, ``baseline``, ``trees`` (each a list of nodes
    ``[feature, threshold, left, right, value]``, a leaf's children -1) and ``thresholds``."""
    try:
        names = tuple(raw["features"])
        feature: List[int] = []
        threshold: List[float] = []
        left: List[int] = []
        right: List[int] = []
        value: List[float] = []
        roots: List[int] = []
        depth = 0
        for t, nodes in enumerate(raw["trees"]):
            base = len(feature)
            roots.append(base)
            depths = [0] * len(nodes)
            for i, (f, thr, lo, hi, v) in enumerate(nodes):
                if lo < 0:  # a leaf
                    feature.append(0), threshold.append(math.inf), left.append(base + i), right.append(base + i)
                else:
                    if not (0 <= f < len(names)):
                        raise ValueError(f"tree {t} node {i}: feature index {f} out of range")
                    feature.append(f), threshold.append(float(thr)), left.append(base + lo), right.append(base + hi)
                    depths[lo] = depths[hi] = depths[i] + 1
                value.append(float(v))
            depth = max(depth, max(depths, default=0))
        return DeciderModel(names, float(raw["baseline"]), np.array(roots, dtype=np.int64),
                            np.array(feature, dtype=np.int64), np.array(threshold), np.array(left, dtype=np.int64),
                            np.array(right, dtype=np.int64), np.array(value), depth,
                            {k: float(v) for k, v in raw["thresholds"].items()},
                            frozenset(k[4:] for k in names if k.startswith("fam=")))
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise ModelFileError(f"{where}: not a decider model ({exc}); refit it with "
                             f".venv/bin/python scripts/train_decider.py") from exc


@lru_cache(maxsize=4)
def load_weights(path: str = str(WEIGHTS)) -> DeciderModel:
    p = Path(path)
    if not p.is_file():
        raise ModelFileError(f"{path}: span decider weights missing; fit them with "
                             f".venv/bin/python scripts/train_decider.py")
    return model_from_json(json.loads(p.read_text(encoding="utf-8")), path)


# Recognizers whose spans are kept whatever the trees say: the CJK analyzers read languages that the trees' data
# (TAB, English prompts, three Chinese or Korean ones) hardly holds, so their few rows there decide nothing.
TRUSTED_FAMILIES = frozenset(("cjk",))


def _guard_would_flag(span: Span) -> bool:
    """Whether the egress guard's independent check (rule 4: name lists, learned PERSON) reports this span."""
    return span.source.startswith("names:") or span.source == "learned:PERSON"


class SpanDecider:
    """Keeps the candidates whose probability of being private reaches the preset's threshold.  Secrets,
    validated structured identifiers (checksums, phone-number metadata), spans of recognizers the trees were
    not fitted on or do not judge (:data:`TRUSTED_FAMILIES`), and (default preset) candidates that the egress guard's independent check would report
    (names, learned PERSON) are always kept."""

    def __init__(self, preset: str = "default", path: str = str(WEIGHTS), threshold: float = -1.0) -> None:
        self.weights = load_weights(path)
        self.keep_guard_spans = preset == "default"
        if threshold < 0 and preset not in self.weights.thresholds:
            raise ModelFileError(f"{path}: no threshold for preset {preset!r}; known: {sorted(self.weights.thresholds)}")
        self.threshold = threshold if threshold >= 0 else self.weights.thresholds[preset]

    def _always(self, group: Sequence[Span]) -> bool:
        # a recognizer the trees never saw (the LLM's opinion, a new plug-in) is trusted: fail toward masking;
        # and (default preset) what the egress guard's independent check reads: a person the name lists or the
        # learned model see is masked here rather than left for the guard to repair
        known = self.weights.families
        return (self.keep_guard_spans and any(_guard_would_flag(s) for s in group)) \
            or any(is_secret(s) or s.source.startswith("structured:") or family(s.source) not in known
                   or family(s.source) in TRUSTED_FAMILIES for s in group)

    def keep(self, text: str, spans: Sequence[Span]) -> List[Span]:
        """The spans of the kept candidates (all members of a kept group, for co-reference)."""
        groups = group_overlapping(spans)
        open_groups = [g for g in groups if not self._always(g)]
        p = self.weights.probabilities([features(text, g) for g in open_groups])
        dropped = {id(g) for g, q in zip(open_groups, p) if q < self.threshold}
        return [s for g in groups if id(g) not in dropped for s in g]

    def scored(self, text: str, spans: Sequence[Span]) -> List[Tuple[List[Span], float]]:
        """Each candidate with its probability (for evaluation and tuning)."""
        groups = group_overlapping(spans)
        return list(zip(groups, (float(q) for q in self.weights.probabilities([features(text, g) for g in groups]))))
