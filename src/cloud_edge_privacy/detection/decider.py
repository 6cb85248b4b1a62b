"""Per-span decision with learned weights: which candidate spans of all recognizers to keep.

Overlapping spans of all recognizers form one candidate.  A logistic model (weights in ``learned/model/decider.json``,
fitted by ``scripts/train_decider.py`` on out-of-fold predictions of the real development prompts and on TAB train) maps the
candidate's features -- which recognizers found it and with which label, how many recognizer families agree,
its case and shape, how common it is as an English word -- to the probability that it is private.  A preset
keeps the candidates at or above its threshold: the default's is low (recall first: a privacy gateway fails
toward masking), the precision preset's high.  Inference is a dot product (numpy-free, no model runtime).
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Dict, List, Mapping, Sequence, Tuple

from ..errors import ModelFileError
from ..spans import Span, is_secret

# Fitted together with the learned model they were calibrated for, and stored next to it.
WEIGHTS = Path(__file__).with_name("learned") / "model" / "decider.json"
_WORD = re.compile(r"[^\W\d_]+")
# Words naming an office, a body or an enactment.  "Principal Public Prosecutor", "Immigration Appeals Board" or
# "Military Service Act" name no one (TAB leaves them unmasked); "Izmir Public Prosecutor" names a place with it.
_INSTITUTION = re.compile(
    r"\b(?:Court|Courts|Prosecutor|Prosecutors|Procurator|Board|Authority|Authorities|Directorate|Ministry|Minister|"
    r"Office|Department|Treasury|Act|Code|Regulations?|Inspector|Inspectorate|Chamber|Division|Council|Agency|"
    r"Service|Committee|Tribunal|Commission|Commissioner|Section|Government|Parliament|Assembly|Police|Counsel|"
    r"Registry|Registrar|Ombudsman|Municipality|Municipalities|Governor|Treaty|Convention|Law)\b")


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
    f["n_families"] = min(len(fams), 4) / 4
    f["lower"] = float(bool(letters) and letters.islower())
    f["upper"] = float(len(letters) > 1 and letters.isupper())
    f["title"] = float(bool(words) and all(w[:1].isupper() for w in words) and not f["upper"])
    f["digit"] = float(any(c.isdigit() for c in surface))
    f["non_latin"] = float(any(ord(c) > 0x24f for c in letters))
    f["one_word"] = float(len(words) <= 1)
    f["long"] = float(len(words) >= 4)
    f["common_word"] = float(len(words) == 1 and english_zipf(words[0].lower()) >= 4.5)
    f["sentence_start"] = float(start == 0 or bool(re.search(r"[.!?\n:]\s*$", text[max(0, start - 3):start])))
    if _INSTITUTION.search(surface):
        # an institution, and whether every other capitalised word is an everyday one (no proper name in it)
        proper = [w for w in words if w[:1].isupper() and not _INSTITUTION.fullmatch(w) and english_zipf(w.lower()) < 3.5]
        f["institution"] = 1.0
        f["generic_institution"] = float(not proper)
    return f


@dataclass(frozen=True)
class DeciderWeights:
    """A fitted logistic model and the presets' thresholds."""

    coef: Mapping[str, float]
    intercept: float
    thresholds: Mapping[str, float]

    @property
    def families(self) -> frozenset:
        """The recognizer families the weights were fitted on."""
        return frozenset(k[4:] for k in self.coef if k.startswith("fam="))

    def probability(self, feats: Mapping[str, float]) -> float:
        z = self.intercept + sum(self.coef.get(k, 0.0) * v for k, v in feats.items())
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


@lru_cache(maxsize=4)
def load_weights(path: str = str(WEIGHTS)) -> DeciderWeights:
    p = Path(path)
    if not p.is_file():
        raise ModelFileError(f"{path}: span decider weights missing; fit them with "
                             f".venv/bin/python scripts/train_decider.py")
    raw = json.loads(p.read_text(encoding="utf-8"))
    return DeciderWeights(dict(raw["coef"]), float(raw["intercept"]), dict(raw["thresholds"]))


def _guard_would_flag(span: Span) -> bool:
    """Whether the egress guard's independent check (rule 4: name lists, learned PERSON) reports this span."""
    return span.source.startswith("names:") or span.source == "learned:PERSON"


class SpanDecider:
    """Keeps the candidates whose probability of being private reaches the preset's threshold.  Secrets,
    validated structured identifiers (checksums, phone-number metadata), spans of recognizers the weights were
    not fitted on, and (default preset) candidates two or more recognizer families agree on or that the egress
    guard's independent check would report (names, learned PERSON) are always kept."""

    def __init__(self, preset: str = "default", path: str = str(WEIGHTS), threshold: float = -1.0,
                 min_agreeing: int = 0) -> None:
        self.weights = load_weights(path)
        # candidates found by at least this many recognizer families are always kept (0: the preset's rule:
        # 2 for the recall-first default, never for the precision preset)
        self.min_agreeing = min_agreeing or (2 if preset == "default" else 10 ** 6)
        self.keep_guard_spans = preset == "default"
        if threshold < 0 and preset not in self.weights.thresholds:
            raise ModelFileError(f"{path}: no threshold for preset {preset!r}; known: {sorted(self.weights.thresholds)}")
        self.threshold = threshold if threshold >= 0 else self.weights.thresholds[preset]

    def keep(self, text: str, spans: Sequence[Span]) -> List[Span]:
        """The spans of the kept candidates (all members of a kept group, for co-reference)."""
        out: List[Span] = []
        known = self.weights.families
        for group in group_overlapping(spans):
            # a recognizer the weights never saw (the LLM's opinion, a new plug-in) is trusted: fail toward masking
            # two or more recognizer families agreeing are kept whatever the weights say (recall first: the
            # weights were fitted on two label policies, PUPA's and TAB's, which disagree on dates and places)
            # and (default preset) what the egress guard's independent check reads: a person the name lists or the
            # learned model see is masked rather than left for the guard to block the whole request on
            if len({family(s.source) for s in group}) >= self.min_agreeing \
                    or (self.keep_guard_spans and any(_guard_would_flag(s) for s in group)) \
                    or any(is_secret(s) or s.source.startswith("structured:") or family(s.source) not in known
                           for s in group) \
                    or self.weights.probability(features(text, group)) >= self.threshold:
                out.extend(group)
        return out

    def scored(self, text: str, spans: Sequence[Span]) -> List[Tuple[List[Span], float]]:
        """Each candidate with its probability (for evaluation and tuning)."""
        return [(g, self.weights.probability(features(text, g))) for g in group_overlapping(spans)]
