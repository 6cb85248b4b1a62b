"""PRISM-style soft gating: a linear gate + softmax over (edge, collaborative, cloud).

Features come from the edge's privacy profile only (no LLM call, no gold labels): the paper's z = [R(P); d]
(eq. 1-3; d is Δ for every entity, so Δ is the feature) plus per-category counts and topic cues. Training minimises
cross-entropy plus λ times the mean entropy of the routing distribution, **the sign of the paper's
eq. 5** (L = L_task + λ·H(π): confident routing is encouraged). The authors' released training code
subtracts the entropy instead (it rewards spread-out routing); we follow the paper.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..sensitivity import RISK_WEIGHTS, level, personal_context, prism_risk
from ..spans import Span
from ..vocabulary import TAB_CATEGORIES

ROUTES = ("edge", "collaborative", "cloud")
CATEGORIES = TAB_CATEGORIES
RISK_SCALE = 5.0
# Sensitive-topic lexicons: PRISM profiles health and finance content as sensitive even without names.
_HEALTH = re.compile(r"\b(symptoms?|diagnos\w*|patient|disease|pain|fever|medication|treatment|doctor|"
                     r"hospital|infection|allerg\w*|pregnan\w*|hiv|cancer|diabetes|depress\w*|nausea)\b", re.I)
_FINANCE = re.compile(r"\b(card|account|bank|balance|transaction|charge[ds]?|loan|credit|debit|iban|"
                      r"payment|salary|tax|usd|eur|dollars?)\b", re.I)
FEATURES = ("bias", "risk", "context_flag", *[f"n_{c}" for c in CATEGORIES], "max_level", "has_direct",
            "health_topic", "finance_topic", "log_length")
WEIGHTS_FILE = Path(__file__).with_name("routing_models") / "prism_gate.json"


def gate_features(text: str, spans: Sequence[Span]) -> np.ndarray:
    counts = {c: 0 for c in CATEGORIES}
    for s in spans:
        counts[s.category if s.category in counts else "MISC"] += 1
    levels = [level(s) for s in spans]
    return np.array([
        1.0,
        min(prism_risk(spans, RISK_WEIGHTS) / RISK_SCALE, 2.0),
        float(personal_context(text, spans)),  # Δ of eq. 2 (first person or a PERSON entity)
        *[min(counts[c], 3) / 3.0 for c in CATEGORIES],
        (max(levels) if levels else 0) / 5.0,
        float(any(s.category in ("PERSON", "CODE") for s in spans)),
        float(bool(_HEALTH.search(text))),
        float(bool(_FINANCE.search(text))),
        math.log1p(len(text.split())) / 5.0,
    ], dtype=np.float64)


def softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


@dataclass
class SoftGate:
    weights: np.ndarray  # (n_features, 3)
    lam: float = 0.1

    def probs(self, x: np.ndarray) -> np.ndarray:
        return softmax(x @ self.weights)

    def route(self, x: np.ndarray) -> Tuple[str, np.ndarray]:
        p = self.probs(x)
        return ROUTES[int(np.argmax(p))], p

    @classmethod
    def fit(cls, X: np.ndarray, y: Sequence[str], lam: float = 0.1, l2: float = 1e-3, lr: float = 0.5,
            epochs: int = 2000, seed: int = 0) -> "SoftGate":
        """Gradient descent on mean CE + λ·mean H(π) + l2·|W|²; deterministic for a seed."""
        rng = np.random.default_rng(seed)
        Y = np.zeros((len(y), len(ROUTES)))
        Y[np.arange(len(y)), [ROUTES.index(r) for r in y]] = 1.0
        W = rng.normal(scale=0.01, size=(X.shape[1], len(ROUTES)))
        for _ in range(epochs):
            P = softmax(X @ W)
            logP = np.log(P + 1e-12)
            H = -(P * logP).sum(axis=1, keepdims=True)
            # d CE / dz = P - Y ;  d H / dz_k = -P_k (log P_k + H)
            G = (P - Y) + lam * (-P * (logP + H))
            W -= lr * (X.T @ G / len(X) + 2 * l2 * W)
        return cls(W, lam)

    def save(self, path: Path = WEIGHTS_FILE, meta: Optional[Dict] = None) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"features": FEATURES, "routes": ROUTES, "lambda": self.lam,
                                    "weights": self.weights.round(6).tolist(), **(meta or {})}, indent=1))

    @classmethod
    def load(cls, path: Path = WEIGHTS_FILE) -> "SoftGate":
        if not path.is_file():
            raise FileNotFoundError(f"{path}: gate weights missing; run scripts/train_router.py")
        data = json.loads(path.read_text())
        if tuple(data["features"]) != FEATURES:
            raise ValueError(f"{path}: trained for other features; retrain with scripts/train_router.py")
        return cls(np.array(data["weights"]), float(data["lambda"]))


def cross_validate(X: np.ndarray, y: Sequence[str], folds: int = 5, seed: int = 0, **fit_kw) -> List[float]:
    """Stratified k-fold accuracy (deterministic)."""
    y = np.array(y)
    rng = np.random.default_rng(seed)
    fold_of = np.zeros(len(y), dtype=int)
    for r in ROUTES:
        idx = np.flatnonzero(y == r)
        rng.shuffle(idx)
        fold_of[idx] = np.arange(len(idx)) % folds
    accs = []
    for k in range(folds):
        tr, te = fold_of != k, fold_of == k
        gate = SoftGate.fit(X[tr], list(y[tr]), seed=seed, **fit_kw)
        pred = [gate.route(x)[0] for x in X[te]]
        accs.append(float(np.mean(np.array(pred) == y[te])))
    return accs
