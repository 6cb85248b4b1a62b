"""Formal (local) differential privacy on detected values.

Every operator here states its mechanism and ε per value, randomizes each *distinct* value of a
document once (co-referent mentions share the output, so ε is not multiplied by the number of
mentions), and charges a :class:`BudgetAccountant`; ``Desensitized.epsilon`` is the document total
under basic sequential composition.

* ``dp_numbers``: Laplace (or Gaussian) noise, from diffprivlib, on the numbers inside detected
  dates, ages and amounts, each clamped to a public domain.  ε per attribute comes from the set
  {1, 10, 100, 1000} (Rehman et al.'s adaptive selection): the smallest ε whose *expected* error meets
  the attribute's utility tolerance, capped by a maximum allowed for its sensitivity level.  The check
  uses only public constants, never the value, so the choice itself leaks nothing.
* ``metric_dp_words``: d_χ-privacy (metric DP) word replacement: noise with density ∝ exp(-ε‖z‖) is
  added to the word's embedding and the nearest vocabulary word is released (Feyisetan et al. 2020).
  The guarantee is ε·d(x, x') for words x, x' at embedding distance d, not plain ε-DP.
* ``prism_ldp``: PRISM's two-layer randomized response: k-ary RR over TAB's 8 categories with ε1,
  then k-ary RR over an explicit public value domain of the released category with ε2, where
  ε1 = ε·w/(w + α(1-w)), ε2 = ε - ε1 and w is the category's sensitivity weight.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..hashing import stable_hash
from ..sensitivity import DEFAULT_LEVELS
from ..spans import Span
from .accountant import BudgetAccountant
from .base import Desensitized, apply_replacements, register_operator
from .gazetteer import _COUNTRIES, country_of
from .surrogates import FIRST_NAMES, LAST_NAMES, NATIONALITIES, ORGANISATIONS

EPSILON_SET = (1.0, 10.0, 100.0, 1000.0)
TAB_CATEGORIES = ("PERSON", "CODE", "LOC", "ORG", "DATETIME", "DEM", "QUANTITY", "MISC")


def doc_rng(seed: int, text: str, salt: str) -> np.random.Generator:
    """A generator seeded by (seed, document, mechanism): deterministic and order-independent."""
    return np.random.default_rng(int(stable_hash([seed, salt, text])[:16], 16))


def _norm(s: str) -> str:
    return " ".join(s.split()).lower()


# -- numbers ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class NumericAttribute:
    """A kind of number with a public domain [lo, hi] (sensitivity = hi - lo) and a utility tolerance."""

    name: str
    lo: float
    hi: float
    tolerance: float          # acceptable expected absolute error, in the attribute's units
    log_scale: bool = False   # amounts are noised as log10(value)

    @property
    def sensitivity(self) -> float:
        return self.hi - self.lo


ATTRIBUTES = {
    "year": NumericAttribute("year", 1900, 2030, tolerance=3.0),
    "day": NumericAttribute("day", 1, 31, tolerance=8.0),
    "age": NumericAttribute("age", 0, 120, tolerance=5.0),
    "amount": NumericAttribute("amount", 0, 9, tolerance=0.3, log_scale=True),   # log10 of the amount
    "count": NumericAttribute("count", 0, 1000, tolerance=20.0),
}
# diffprivlib's analytic-Gaussian calibration overflows (exp(ε)) far above this.
GAUSSIAN_MAX_EPSILON = 100.0
# The largest ε each sensitivity level may use (privacy caps utility).
MAX_EPSILON_BY_LEVEL = {5: 10.0, 4: 10.0, 3: 100.0, 2: 1000.0, 1: 1000.0}


def choose_epsilon(attr: NumericAttribute, level: int, epsilon_set: Sequence[float] = EPSILON_SET,
                   gaussian: bool = False, delta: float = 1e-5) -> Tuple[float, bool]:
    """Smallest ε in the set whose expected |error| meets the tolerance, capped by the level's maximum.

    Returns (ε, utility_ok).  Uses public constants only.
    """
    cap = MAX_EPSILON_BY_LEVEL.get(level, 10.0)
    if gaussian:
        cap = min(cap, GAUSSIAN_MAX_EPSILON)
    allowed = [e for e in sorted(epsilon_set) if e <= cap] or [min(epsilon_set)]
    for eps in allowed:
        if gaussian:
            sigma = attr.sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / eps
            expected = sigma * math.sqrt(2 / math.pi)
        else:
            expected = attr.sensitivity / eps  # E|Laplace(b)| = b = Δ/ε
        if expected <= attr.tolerance:
            return eps, True
    return allowed[-1], False


_NUM = re.compile(r"\d[\d,]*(?:\.\d+)?")


def _attribute_for(span: Span, surface: str, number: str, following: str) -> Optional[str]:
    value = float(number.replace(",", ""))
    if span.category == "DATETIME":
        if re.fullmatch(r"(1[89]\d{2}|20\d{2})", number):
            return "year"
        if re.match(r"\s*(?:st|nd|rd|th)?\s*(January|February|March|April|May|June|July|August|September|"
                    r"October|November|December)", following) and value <= 31:
            return "day"
        return "count"
    if span.category == "DEM" and value <= 120:
        return "age"
    if span.category == "QUANTITY":
        return "amount"
    return None


def _make_mechanism(attr: NumericAttribute, eps: float, gaussian: bool, delta: float, rng: np.random.Generator):
    from diffprivlib.mechanisms import GaussianAnalytic, Laplace

    seed = int(rng.integers(0, 2**31 - 1))
    if gaussian:
        return GaussianAnalytic(epsilon=eps, delta=delta, sensitivity=attr.sensitivity, random_state=seed)
    return Laplace(epsilon=eps, sensitivity=attr.sensitivity, random_state=seed)


@register_operator("dp_numbers")
class DPNumbers:
    """Noise the numbers in dates, ages and amounts; other detected spans get typed placeholders."""

    name = "dp_numbers"

    def __init__(self, mechanism: str = "laplace", epsilon: Optional[float] = None, delta: float = 1e-5,
                 levels: Optional[Dict[str, int]] = None) -> None:
        if mechanism not in ("laplace", "gaussian"):
            raise ValueError("mechanism must be 'laplace' or 'gaussian'")
        self.gaussian = mechanism == "gaussian"
        self.fixed_epsilon = epsilon  # None: adaptive choice from EPSILON_SET
        self.delta = delta
        self.levels = dict(levels or DEFAULT_LEVELS)

    def _noise_number(self, attr: NumericAttribute, raw: float, level: int, rng, acct: BudgetAccountant,
                      what: str) -> str:
        if self.fixed_epsilon is not None:
            eps, ok = float(self.fixed_epsilon), True
            if self.gaussian and eps > GAUSSIAN_MAX_EPSILON:
                raise ValueError(f"Gaussian mechanism supports epsilon <= {GAUSSIAN_MAX_EPSILON}")
        else:
            eps, ok = choose_epsilon(attr, level, gaussian=self.gaussian, delta=self.delta)
        x = math.log10(max(raw, 1.0)) if attr.log_scale else raw
        x = min(max(x, attr.lo), attr.hi)  # clamp to the public domain: this is what bounds sensitivity
        mech = _make_mechanism(attr, eps, self.gaussian, self.delta, rng)
        y = min(max(mech.randomise(x), attr.lo), attr.hi)  # post-processing keeps the guarantee
        acct.spend("gaussian" if self.gaussian else "laplace", eps, self.delta if self.gaussian else 0.0,
                   f"{what}:{attr.name}{'' if ok else ' (utility tolerance not met)'}")
        if attr.log_scale:
            return f"{10 ** y:,.0f}"
        return str(int(round(y)))

    def __call__(self, text: str, spans: Sequence[Span], seed: int = 0) -> Desensitized:
        rng = doc_rng(seed, text, self.name)
        acct = BudgetAccountant()
        memo: Dict[Tuple[str, str], str] = {}
        counters: Dict[str, int] = {}

        def replace(span: Span, surface: str) -> str:
            key = (span.category, _norm(surface))
            if key in memo:
                return memo[key]
            if span.category in ("DATETIME", "DEM", "QUANTITY") and _NUM.search(surface):
                level = self.levels.get(span.category, 3)

                def sub(m: re.Match) -> str:
                    attr = _attribute_for(span, surface, m.group(), surface[m.end():])
                    if attr is None:
                        return m.group()
                    return self._noise_number(ATTRIBUTES[attr], float(m.group().replace(",", "")), level,
                                              rng, acct, span.category)

                out = _NUM.sub(sub, surface)
            else:
                counters[span.category] = counters.get(span.category, 0) + 1
                out = f"[{span.category}_{counters[span.category]}]"
            memo[key] = out
            return out

        res = apply_replacements(text, spans, replace, self.name)
        res.epsilon = acct.total_epsilon
        res.accountant = acct  # type: ignore[attr-defined]
        return res


# -- metric DP on word embeddings -------------------------------------------------------------------

class WordEmbeddings:
    """Static word vectors: the input embedding table of all-MiniLM-L6-v2 (from PyPI), restricted to
    whole alphabetic wordpieces of 3+ letters (about 20k words).  Loaded once per process."""

    _cache: Optional["WordEmbeddings"] = None

    def __init__(self) -> None:
        from safetensors.numpy import load_file

        from ..models.embeddings import minilm_dir

        d = minilm_dir()
        vocab = (d / "vocab.txt").read_text(encoding="utf-8").split("\n")
        tensors = load_file(str(d / "model.safetensors"))
        key = next(k for k in tensors if k.endswith("word_embeddings.weight"))
        table = tensors[key].astype(np.float32)
        keep = [i for i, w in enumerate(vocab[: table.shape[0]]) if re.fullmatch(r"[a-z]{3,}", w)]
        self.words = [vocab[i] for i in keep]
        self.index = {w: i for i, w in enumerate(self.words)}
        self.vectors = table[keep]
        self.sq_norms = (self.vectors ** 2).sum(axis=1)
        self.source = f"all-MiniLM-L6-v2 input embeddings ({len(self.words)} words, dim {table.shape[1]})"

    @classmethod
    def load(cls) -> "WordEmbeddings":
        if cls._cache is None:
            cls._cache = cls()
        return cls._cache


def metric_dp_noise(dim: int, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """Sample z with density ∝ exp(-ε‖z‖): uniform direction, ‖z‖ ~ Gamma(dim, 1/ε)."""
    direction = rng.normal(size=dim)
    direction /= np.linalg.norm(direction)
    return direction * rng.gamma(shape=dim, scale=1.0 / epsilon)


@register_operator("metric_dp_words")
class MetricDPWords:
    """Replace each word of a detected span by the nearest vocabulary word to its noised embedding.

    Words outside the vocabulary (most names, all numbers) have no embedding: they are released as a
    typed placeholder, which spends no budget.
    """

    name = "metric_dp_words"

    def __init__(self, epsilon: float = 10.0) -> None:
        if epsilon <= 0:
            raise ValueError("epsilon must be positive")
        self.epsilon = float(epsilon)
        self.emb = WordEmbeddings.load()

    def _release(self, words: List[str], rng, acct: BudgetAccountant) -> Dict[str, Optional[str]]:
        """Noise every distinct in-vocabulary word once, then one batched nearest-neighbour search."""
        known = [w for w in words if w in self.emb.index]
        out: Dict[str, Optional[str]] = {w: None for w in words}
        if not known:
            return out
        dim = self.emb.vectors.shape[1]
        noisy = np.stack([self.emb.vectors[self.emb.index[w]] + metric_dp_noise(dim, self.epsilon, rng) for w in known])
        # nearest neighbour: argmin ||V - v||^2 = argmin (||V||^2 - 2 V.v), for all words at once
        nearest = np.argmin(self.emb.sq_norms[:, None] - 2.0 * (self.emb.vectors @ noisy.T), axis=0)
        for w, j in zip(known, nearest):
            acct.spend("metric_dp", self.epsilon, what="word (d_chi: eps*distance)")
            out[w] = self.emb.words[int(j)]
        return out

    def __call__(self, text: str, spans: Sequence[Span], seed: int = 0) -> Desensitized:
        rng = doc_rng(seed, text, self.name)
        acct = BudgetAccountant()
        words: List[str] = []
        for span in sorted(spans):
            for tok in re.findall(r"\w+", text[span.start:span.end]):
                if tok.lower() not in words:
                    words.append(tok.lower())
        released = self._release(words, rng, acct)

        def replace(span: Span, surface: str) -> str:
            out = []
            for tok in re.findall(r"\w+|\W+", surface):
                if not tok[0].isalnum():
                    out.append(tok)
                    continue
                new = released.get(tok.lower())
                if new is None:
                    out.append(f"[{span.category}]")
                else:
                    out.append(new.capitalize() if tok[:1].isupper() else new)
            return "".join(out)

        res = apply_replacements(text, spans, replace, self.name)
        res.epsilon = acct.total_epsilon
        res.accountant = acct  # type: ignore[attr-defined]
        return res


@register_operator("uniform_ldp")
class UniformMetricDP(MetricDPWords):
    """PRISM's "Uniform LDP" baseline: metric-DP replacement of *every* word, detected or not."""

    name = "uniform_ldp"

    def __call__(self, text: str, spans: Sequence[Span], seed: int = 0) -> Desensitized:
        every_word = [Span(m.start(), m.end(), "WORD", 1.0, "uniform") for m in re.finditer(r"\w+", text)]
        res = super().__call__(text, every_word, seed)
        res.method = self.name
        return res


# -- PRISM two-layer randomized response -------------------------------------------------------------

OTHER = "<other>"
# Category sensitivity weights w_c in (0, 1] (PRISM eq. 6); configurable.
PRISM_WEIGHTS = {"PERSON": 0.9, "CODE": 0.95, "LOC": 0.4, "ORG": 0.5, "DATETIME": 0.3, "DEM": 0.7,
                 "QUANTITY": 0.3, "MISC": 0.5}


def _year_domain() -> List[str]:
    return [str(y) for y in range(1950, 2026)]


def value_domains() -> Dict[str, List[str]]:
    """Explicit public value domains per category (each also contains OTHER)."""
    return {
        "PERSON": [f"{f} {l}" for f, l in zip(FIRST_NAMES, LAST_NAMES)],
        "CODE": [f"{n:05d}/{y % 100:02d}" for n, y in zip(range(10000, 90000, 2500), range(90, 122))],
        "LOC": sorted(_COUNTRIES),
        "ORG": list(ORGANISATIONS),
        "DATETIME": _year_domain(),
        "DEM": list(NATIONALITIES),
        "QUANTITY": [f"about {10 ** k:,}" for k in range(0, 9)],
        "MISC": ["a profession", "an illness", "a religion", "a political opinion", "an event"],
    }


def map_to_domain(category: str, surface: str, domain: Sequence[str]) -> str:
    """Deterministic, public pre-processing of a value into its category's domain (or OTHER)."""
    if category == "DATETIME":
        years = re.findall(r"\b(19[5-9]\d|20[0-2]\d)\b", surface)
        return years[-1] if years and years[-1] in domain else OTHER
    if category == "LOC":
        c = country_of(surface)
        return c if c in domain else OTHER
    if category == "QUANTITY":
        m = _NUM.search(surface)
        if m:
            k = int(math.log10(max(float(m.group().replace(",", "")), 1.0)))
            cand = f"about {10 ** min(k, 8):,}"
            return cand if cand in domain else OTHER
        return OTHER
    return surface if surface in domain else OTHER


def k_rr(true: str, domain: Sequence[str], epsilon: float, rng: np.random.Generator) -> str:
    """k-ary randomized response: keep with p = e^ε/(e^ε + k - 1), else a uniform *other* element."""
    k = len(domain)
    if true not in domain:
        raise ValueError(f"{true!r} is not in the domain")
    p_keep = math.exp(epsilon) / (math.exp(epsilon) + k - 1)
    if rng.random() < p_keep:
        return true
    others = [d for d in domain if d != true]
    return others[int(rng.integers(len(others)))]


def split_budget(epsilon: float, weight: float, alpha: float) -> Tuple[float, float]:
    """PRISM eq. 6-7: ε1 = ε·w/(w + α(1-w)), ε2 = ε - ε1."""
    e1 = epsilon * weight / (weight + alpha * (1 - weight))
    return e1, epsilon - e1


@register_operator("prism_ldp")
class PrismTwoLayerLDP:
    """PRISM's adaptive two-layer LDP as the paper states it, over explicit domains.

    Only the released value is sent (the released category is implied by it and is covered by ε1).
    A value outside its domain is first mapped to OTHER, rendered as a typed placeholder.
    """

    name = "prism_ldp"

    def __init__(self, epsilon: float = 2.0, alpha: float = 0.5, weights: Optional[Dict[str, float]] = None) -> None:
        if epsilon <= 0 or not 0 < alpha <= 1:
            raise ValueError("need epsilon > 0 and 0 < alpha <= 1")
        self.epsilon, self.alpha = float(epsilon), float(alpha)
        self.weights = dict(PRISM_WEIGHTS, **(weights or {}))
        self.domains = {c: d + [OTHER] for c, d in value_domains().items()}

    def randomize(self, category: str, surface: str, rng, acct: BudgetAccountant) -> Tuple[str, str]:
        cat = category if category in TAB_CATEGORIES else "MISC"
        e1, e2 = split_budget(self.epsilon, self.weights.get(cat, 0.5), self.alpha)
        noisy_cat = k_rr(cat, TAB_CATEGORIES, e1, rng)
        dom = self.domains[noisy_cat]
        # If the category changed, the true value has no meaning in the new domain: start from OTHER.
        start = map_to_domain(cat, surface, dom) if noisy_cat == cat else OTHER
        value = k_rr(start, dom, e2, rng)
        acct.spend("k-RR category", e1, what=cat)
        acct.spend("k-RR value", e2, what=cat)
        return noisy_cat, value

    def __call__(self, text: str, spans: Sequence[Span], seed: int = 0) -> Desensitized:
        rng = doc_rng(seed, text, self.name)
        acct = BudgetAccountant()
        memo: Dict[Tuple[str, str], str] = {}

        def replace(span: Span, surface: str) -> str:
            key = (span.category, _norm(surface))
            if key not in memo:
                noisy_cat, value = self.randomize(span.category, surface, rng, acct)
                memo[key] = f"[{noisy_cat}]" if value == OTHER else value
            return memo[key]

        res = apply_replacements(text, spans, replace, self.name)
        res.epsilon = acct.total_epsilon
        res.accountant = acct  # type: ignore[attr-defined]
        return res
