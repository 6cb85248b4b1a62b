"""Rehman et al. (AICCC 2023) adaptive contextual DP over numeric series, and the baselines.

The method, as implemented here:

1. **Sensitivity rules** (:data:`DEFAULT_RULES`): a table (service -> attribute -> 0/1).  0 sends the series
   as it is (no DP, no ε); 1 protects it.  An attribute missing from the table is treated as sensitive.
2. **Laplace** from diffprivlib on every value: Δf = max - min of the attribute's *public domain* (values are
   clipped into it first so Δf holds), scale Δf/ε.
3. **Adaptive ε** from {1, 10, 100, 1000}: the smallest ε whose noisy series keeps a Pearson correlation with
   the original of at least ``threshold`` (default 0.9; the paper names no number).  By default the
   correlation is measured on *public calibration data* of the same attribute (``calibration="public"``), so
   the choice leaks nothing about the private series.  ``calibration="private"`` reproduces the paper, which
   looks at the private series; the chosen ε then depends on private data and the release is labelled
   heuristic (no formal guarantee).
4. **Stored noise**: the noise vector is stored per (dataset, series, method, ε, seed) and reused, so every
   prompt about the same series sees the same noisy values and the series is released once (repeated
   questions are post-processing and cost no further ε).

Privacy accounting (basic sequential composition, stated in every release): each value is ε-DP for the
neighbouring relation "one value changes anywhere in the public domain".  A series of n values is therefore
n·ε-DP for "the whole series changes" (user level for a one-series user), and a user with several series
pays the sum.  The paper reports only the per-value ε.

Baselines: ``none`` (ε = ∞), ``uniform`` (ε = 1 per value on every value, sensitive or not) and
``user_windows`` (user-level: k window means, each with sensitivity Δf because a neighbouring *user* may change
every value, scale k·Δf/ε_user, so the whole series is ε_user-DP).
"""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ..desensitization.base import HEURISTIC, PURE, PrivacyCharge, PrivacyMap
from ..hashing import stable_hash
from ..randomness import BENCHMARK, Randomness
from .data import Series, calibration_series

EPSILON_CANDIDATES: Tuple[float, ...] = (1.0, 10.0, 100.0, 1000.0)
DEFAULT_THRESHOLD = 0.9

# Service-dependent sensitivity rules (1 = protect, 0 = send as is); unknown attributes count as sensitive.
DEFAULT_RULES: Dict[str, Dict[str, int]] = {
    "energy_advice": {"power": 1, "solar_generation": 1, "heart_rate": 1, "wind_speed": 0, "temperature": 0},
    "health_assistant": {"heart_rate": 1, "power": 1, "solar_generation": 0, "wind_speed": 0, "temperature": 0},
    "weather_report": {"wind_speed": 0, "temperature": 0, "solar_generation": 0, "power": 1, "heart_rate": 1},
}
DEFAULT_SERVICE = {"acsf1": "energy_advice", "solar": "energy_advice", "mitdb": "health_assistant"}

METHODS = ("none", "rehman_adaptive", "uniform", "user_windows")


def is_sensitive(service: str, attribute: str, rules: Optional[Mapping[str, Mapping[str, int]]] = None) -> bool:
    """The rule table's flag; an unknown service or attribute is sensitive (fail safe)."""
    table = DEFAULT_RULES if rules is None else rules
    return bool(table.get(service, {}).get(attribute, 1))


@dataclass
class Release:
    """What leaves the edge for one series, with its declared privacy."""

    method: str
    sent: List[float]                 # the values sent (n values, or k window means)
    labels: List[str]                 # what each sent value covers, e.g. "t=0" or "t=0-11 (mean)"
    per_value_epsilon: float          # inf for no noise
    epsilon_series: float             # composed over the series (basic composition)
    epsilon_user: float               # composed over all series of the user released so far (here: one)
    chosen_epsilon: Optional[float] = None
    calibration: str = ""
    calibration_correlation: Optional[float] = None
    threshold_met: Optional[bool] = None
    sensitive: bool = True
    charges: List[PrivacyCharge] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)

    def to_dict(self) -> Dict:
        d = asdict(self)
        d["charges"] = [{"mechanism": c.privacy_map.mechanism, "kind": c.privacy_map.kind,
                         "epsilon": c.privacy_map.epsilon, "neighbouring": c.privacy_map.neighbouring,
                         "protects": c.privacy_map.protects, "what": c.what} for c in self.charges]
        for k in ("per_value_epsilon", "epsilon_series", "epsilon_user"):
            if math.isinf(d[k]):
                d[k] = "inf"
        return d


class NoiseStore:
    """Noise vectors stored per key on disk (JSON) and reused; ``root=None`` keeps them in memory only.

    In deployment the store is edge-private state: the noise is as secret as the data it hides.
    """

    def __init__(self, root: Optional[Path] = None) -> None:
        self.root = Path(root) if root is not None else None
        self._mem: Dict[str, List[float]] = {}

    def get_or_draw(self, key_parts: Dict, draw: Callable[[], np.ndarray]) -> np.ndarray:
        key = stable_hash(key_parts)
        if key in self._mem:
            return np.asarray(self._mem[key])
        path = self.root / f"{key}.json" if self.root is not None else None
        if path is not None and path.is_file():
            noise = json.loads(path.read_text(encoding="utf-8"))["noise"]
        else:
            noise = [float(v) for v in draw()]
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_suffix(".tmp")
                tmp.write_text(json.dumps({"key": key_parts, "noise": noise}), encoding="utf-8")
                tmp.replace(path)
        self._mem[key] = noise
        return np.asarray(noise, dtype=float)


def laplace_noise(n: int, epsilon: float, sensitivity: float, rand: Randomness, *parts: object) -> np.ndarray:
    """n Laplace(Δf/ε) draws from diffprivlib (CSPRNG in deployment, seeded in benchmark mode)."""
    from diffprivlib.mechanisms import Laplace

    mech = Laplace(epsilon=float(epsilon), sensitivity=float(sensitivity),
                   random_state=rand.noise_random_state("timeseries-laplace", *parts))
    return np.array([mech.randomise(0.0) for _ in range(n)], dtype=float)


def pearson(a: Sequence[float], b: Sequence[float]) -> float:
    """Pearson correlation; 0 when either series is constant."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.std() == 0 or b.std() == 0:
        return 0.0
    return float(np.corrcoef(a, b)[0, 1])


def choose_epsilon(reference: np.ndarray, sensitivity: float, domain: Tuple[float, float], rand: Randomness,
                   threshold: float = DEFAULT_THRESHOLD, candidates: Sequence[float] = EPSILON_CANDIDATES,
                   draws: int = 20, tag: str = "") -> Tuple[float, float, bool]:
    """Smallest candidate ε whose noisy ``reference`` keeps mean correlation >= ``threshold``.

    Returns (ε, mean correlation at that ε, whether the threshold was met; if none meets it, the largest ε).
    """
    ref = np.clip(reference, *domain)
    corr = 0.0
    for eps in sorted(candidates):
        cs = [pearson(ref, np.clip(ref + laplace_noise(len(ref), eps, sensitivity, rand, "calib", tag, eps, d),
                                   *domain)) for d in range(draws)]
        corr = float(np.mean(cs))
        if corr >= threshold:
            return float(eps), corr, True
    return float(max(candidates)), corr, False


class TimeSeriesProtector:
    """The edge operator over one numeric series: ``protect(series, method) -> Release``."""

    def __init__(self, rand: Randomness, store: Optional[NoiseStore] = None, threshold: float = DEFAULT_THRESHOLD,
                 candidates: Sequence[float] = EPSILON_CANDIDATES, calibration: str = "public",
                 calibration_draws: int = 20, uniform_epsilon: float = 1.0, user_epsilon: float = 10.0,
                 windows: int = 4, rules: Optional[Mapping[str, Mapping[str, int]]] = None,
                 services: Optional[Mapping[str, str]] = None, clip_output: bool = True) -> None:
        if calibration not in ("public", "private"):
            raise ValueError(f"calibration must be 'public' or 'private', got {calibration!r}")
        if not 0.0 < threshold <= 1.0:
            raise ValueError(f"threshold must be in (0, 1], got {threshold}")
        if min(candidates) <= 0 or uniform_epsilon <= 0 or user_epsilon <= 0:
            raise ValueError("every ε must be positive")
        if windows < 1:
            raise ValueError("windows must be at least 1")
        self.rand = rand
        self.store = store or NoiseStore()
        self.threshold = float(threshold)
        self.candidates = tuple(float(c) for c in candidates)
        self.calibration = calibration
        self.calibration_draws = int(calibration_draws)
        self.uniform_epsilon = float(uniform_epsilon)
        self.user_epsilon = float(user_epsilon)
        self.windows = int(windows)
        self.rules = rules
        self.services = dict(DEFAULT_SERVICE if services is None else services)
        self.clip_output = clip_output

    # -- helpers ----------------------------------------------------------------------------------
    def _noise(self, s: Series, method: str, n: int, eps: float, sens: float, seed_tag: object) -> np.ndarray:
        parts = {"dataset": s.dataset, "series": s.series_id, "attribute": s.attribute, "method": method,
                 "epsilon": eps, "n": n, "sensitivity": sens, "mode": self.rand.mode, "seed": self.rand.seed,
                 "tag": seed_tag}
        if self.rand.mode != BENCHMARK:
            parts["key_id"] = stable_hash(self.rand.key.hex())  # never the key itself
        return self.store.get_or_draw(parts, lambda: laplace_noise(n, eps, sens, self.rand, s.dataset, s.series_id,
                                                                     method, eps, seed_tag))

    def _out(self, s: Series, x: np.ndarray) -> np.ndarray:
        return np.clip(x, *s.domain) if self.clip_output else x

    def service(self, s: Series) -> str:
        return self.services.get(s.dataset, "")

    # -- methods ----------------------------------------------------------------------------------
    def protect(self, s: Series, method: str, tag: object = 0) -> Release:
        """Release ``s`` under ``method`` (one of :data:`METHODS`); ``tag`` separates repeated noise draws."""
        if method == "none":
            return Release("none", list(s.values), [f"t={i}" for i in range(len(s.values))], math.inf, math.inf,
                           math.inf, sensitive=is_sensitive(self.service(s), s.attribute, self.rules),
                           notes=["no protection: the original series leaves the edge"])
        if method == "uniform":
            return self._per_value(s, "uniform", self.uniform_epsilon, tag, notes=[
                f"uniform baseline: Laplace at ε={self.uniform_epsilon:g} on every value, sensitive or not"])
        if method == "rehman_adaptive":
            return self._adaptive(s, tag)
        if method == "user_windows":
            return self._windows(s, tag)
        raise ValueError(f"unknown time-series method {method!r}; known: {METHODS}")

    def _per_value(self, s: Series, method: str, eps: float, tag: object, notes: List[str],
                   kind: str = PURE, **extra: object) -> Release:
        x = np.clip(s.array, *s.domain)
        n, sens = len(x), s.sensitivity
        sent = self._out(s, x + self._noise(s, method, n, eps, sens, tag))
        pm = PrivacyMap("Laplace (diffprivlib), scale Δf/ε with Δf = public domain width", kind, eps, 0.0,
                        f"one value of {s.attribute} changes within its public domain {list(s.domain)}",
                        f"one reading of {s.attribute} (per value)")
        charges = [PrivacyCharge(pm, f"{s.dataset}/{s.series_id}[{i}]") for i in range(n)]
        notes = notes + [f"basic composition: {n} values x ε={eps:g} = {n * eps:g} for the whole series "
                         f"(user level for a one-series user)"]
        return Release(method, [round(float(v), 4) for v in sent], [f"t={i}" for i in range(n)], eps, n * eps,
                       n * eps, charges=charges, notes=notes, **extra)  # type: ignore[arg-type]

    def _adaptive(self, s: Series, tag: object) -> Release:
        service = self.service(s)
        if not is_sensitive(service, s.attribute, self.rules):
            return Release("rehman_adaptive", list(s.values), [f"t={i}" for i in range(len(s.values))], math.inf,
                           math.inf, math.inf, sensitive=False,
                           notes=[f"rule ({service}, {s.attribute}) = 0: sent without noise, no guarantee"])
        if self.calibration == "public":
            ref = calibration_series(s.dataset, len(s.values)).array
            src = "public calibration series"
        else:
            ref = s.array
            src = "the private series itself (paper; the choice leaks, release labelled heuristic)"
        eps, corr, met = choose_epsilon(ref, s.sensitivity, s.domain, self.rand, self.threshold, self.candidates,
                                        self.calibration_draws, tag=f"{s.dataset}/{self.calibration}")
        notes = [f"ε chosen from {list(self.candidates)} on {src}: smallest with mean correlation >= "
                 f"{self.threshold:g} over {self.calibration_draws} draws -> ε={eps:g} (corr {corr:.3f}"
                 f"{'' if met else ', threshold not met: largest ε used'})"]
        kind = PURE if self.calibration == "public" else HEURISTIC
        return self._per_value(s, "rehman_adaptive", eps, tag, notes, kind=kind, chosen_epsilon=eps,
                               calibration=self.calibration, calibration_correlation=round(corr, 4),
                               threshold_met=met)

    def _windows(self, s: Series, tag: object) -> Release:
        x = np.clip(s.array, *s.domain)
        k = min(self.windows, len(x))
        bounds = np.linspace(0, len(x), k + 1).astype(int)
        means = np.array([x[a:b].mean() for a, b in zip(bounds[:-1], bounds[1:])])
        # user-level neighbours may change every value, so each mean moves by up to Δf; k means share ε_user
        per = self.user_epsilon / k
        sent = self._out(s, means + self._noise(s, "user_windows", k, per, s.sensitivity, tag))
        pm = PrivacyMap("Laplace (diffprivlib) on window means, scale Δf/(ε_user/k)", PURE, per, 0.0,
                        f"the user's whole {s.attribute} series is replaced by any series within the public domain",
                        "the user's whole series (user level)")
        charges = [PrivacyCharge(pm, f"{s.dataset}/{s.series_id} window {i}") for i in range(k)]
        return Release("user_windows", [round(float(v), 4) for v in sent],
                       [f"t={a}-{b - 1} (mean)" for a, b in zip(bounds[:-1], bounds[1:])], per, self.user_epsilon,
                       self.user_epsilon, charges=charges,
                       notes=[f"user level: {k} window means at ε={per:g} each (sensitivity Δf each), "
                              f"composed ε={self.user_epsilon:g} for the whole series"])
