"""The classes and metric functions behind the Ianvs example's thin module files (jointinference).

* edge model: answers the template with the ORIGINAL values on the edge (the edge-only route, and the edge's
  reference answer);
* router: sends every sample to the cloud route (the edge decides *what* leaves, not whether);
* cloud model (a thin adapter over the edge side): releases the series with the configured method (stored
  noise), sends only the released values to the cloud model, and, for STS, asks the edge model the same
  question with the released values.  ``reference_answers`` (benchmark only) also asks the cloud model with
  the original values, so the cloud STS has its reference; the offline cloud is a local process, and the
  result says so (``reference_sent_original``).
* metrics: ``f(y_true, y_pred)`` over Ianvs's 4-lists ``[is_hard, result, edge_result, cloud_result]``.

A sample's ``x`` is a dict: {"series": Series.to_dict(), "template": "max"|"mean"|"event"}; ``y`` is the
numeric truth of the template as a string ("" for free-text templates).
"""
from __future__ import annotations

import math
import os
import statistics
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from pydantic import BaseModel, ConfigDict, Field

from ..randomness import BENCHMARK_CAVEAT
from .attack import attack
from .bench import BenchConfig, TSModels, build_messages, make_protector
from .data import Series
from .operator import METHODS, NoiseStore
from .ts_metrics import numeric_error, sts


class EdgeConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    max_tokens: int = Field(48, ge=1, le=512)


class CloudConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    method: str = "rehman_adaptive"
    seed: int = 1
    max_tokens: int = Field(48, ge=1, le=512)
    threshold: float = Field(0.9, gt=0, le=1)
    calibration: str = "public"
    user_epsilon: float = Field(10.0, gt=0)
    windows: int = Field(4, ge=1)
    reference_answers: bool = False  # True sends the original series to the cloud: measurement only


class RouterConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    route: str = "cloud"


def _validate(model: type, params: Dict[str, Any], where: str) -> Any:
    from ..errors import ConfigError

    try:
        return model.model_validate(params)
    except Exception as exc:  # pydantic.ValidationError names the key
        raise ConfigError(f"{where}: {exc}") from exc


def _sample(data: Any) -> Dict[str, Any]:
    if not isinstance(data, dict) or "series" not in data or "template" not in data:
        raise ValueError("a time-series sample is a dict with 'series' and 'template'")
    return data


def _manifest() -> str:
    """An existing local file for Sedna's model_path check (never a model directory)."""
    return str(Path(__file__).resolve())


class TimeSeriesEdgeModel:
    """Ianvs edgemodel: the edge LLM answers with the original values (nothing leaves)."""

    def __init__(self, **hyperparameters: Any) -> None:
        self.config = _validate(EdgeConfig, hyperparameters, "edgemodel TimeSeriesEdgeModel")
        os.environ["model_path"] = _manifest()
        self.models = TSModels(self.config.max_tokens)

    def load(self, model_url: Optional[str] = None, **kwargs: Any) -> None:
        """Nothing to load eagerly: the GGUF model is loaded on first use."""

    def predict(self, data: Any, **kwargs: Any) -> Dict[str, Any]:
        x = _sample(data)
        s = Series.from_dict(x["series"])
        from .operator import Release

        orig = Release("none", list(s.values), [], math.inf, math.inf, math.inf)
        return {"answer": self.models.edge(build_messages(s, orig, x["template"])), "route": "edge",
                "template": x["template"], "dataset": s.dataset}

    def cleanup(self) -> None:
        """The process-wide llama.cpp model stays loaded for the next test case."""


class TimeSeriesCloudModel:
    """Ianvs cloudmodel: release on the edge side, send only released values, measure STS."""

    def __init__(self, **hyperparameters: Any) -> None:
        self.config = _validate(CloudConfig, hyperparameters, "cloudmodel TimeSeriesCloudModel")
        if self.config.method not in METHODS:
            from ..errors import ConfigError

            raise ConfigError(f"cloudmodel TimeSeriesCloudModel: method must be one of {METHODS}, "
                              f"got {self.config.method!r}")
        c = self.config
        self.bench = BenchConfig(max_tokens=c.max_tokens, threshold=c.threshold, calibration=c.calibration,
                                 user_epsilon=c.user_epsilon, windows=c.windows)
        self.models = TSModels(c.max_tokens)
        root = os.environ.get("RESULT_SAVED_URL")
        self.store = NoiseStore(Path(root) / "noise" if root else None)

    def inference(self, data: Any, **kwargs: Any) -> Dict[str, Any]:
        x = _sample(data)
        s = Series.from_dict(x["series"])
        tpl = x["template"]
        rel = make_protector(self.bench, self.config.seed, self.store).protect(s, self.config.method)
        sent_messages = build_messages(s, rel, tpl)
        answer = self.models.cloud(sent_messages)
        edge_protected = self.models.edge(sent_messages)
        orig = make_protector(self.bench, 0).protect(s, "none")
        edge_ref = self.models.edge(build_messages(s, orig, tpl))
        out: Dict[str, Any] = {"answer": answer, "route": "cloud", "method": rel.method, "template": tpl,
                               "dataset": s.dataset, "delta_f": s.sensitivity, "sent_messages": sent_messages,
                               "release": rel.to_dict(),
                               "edge_answer_protected": edge_protected, "edge_answer_original": edge_ref,
                               "randomness": f"benchmark seed {self.config.seed}: {BENCHMARK_CAVEAT}"}
        if self.config.reference_answers:
            out["cloud_answer_original"] = self.models.cloud(build_messages(s, orig, tpl))
            out["reference_sent_original"] = True
        a = attack(rel, s)
        out["attack"] = {"reconstruction_success": a.reconstruction_success, "event_success": a.event_success,
                         "event_balanced_accuracy": a.event_balanced_accuracy}
        return out

    def cleanup(self) -> None:
        """Nothing to release (the local server is shared and stopped at exit)."""


class TimeSeriesRouter:
    """Ianvs hard_example_mining: a fixed route (``cloud``: the protected series goes to the cloud)."""

    def __init__(self, **hyperparameters: Any) -> None:
        self.config = _validate(RouterConfig, hyperparameters, "hard_example_mining TimeSeriesRouter")
        if self.config.route not in ("edge", "cloud"):
            from ..errors import ConfigError

            raise ConfigError(f"hard_example_mining TimeSeriesRouter: route must be edge or cloud, "
                              f"got {self.config.route!r}")

    def __call__(self, infer_result: Any = None, **kwargs: Any) -> bool:
        return self.config.route == "cloud"


# -- metrics ---------------------------------------------------------------------------------------
def _cloud_results(y_pred: Sequence[Any]) -> List[Dict[str, Any]]:
    return [p[3] for p in y_pred if isinstance(p, (list, tuple)) and len(p) == 4 and isinstance(p[3], dict)]


def _mean(values: List[float]) -> float:
    return round(statistics.fmean(values), 6) if values else math.nan


def sts_cloud(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    """Mean STS of the cloud model's answers (original vs released values)."""
    res = [r for r in _cloud_results(y_pred) if "cloud_answer_original" in r]
    return _mean(sts([(r["cloud_answer_original"], r["answer"]) for r in res]))


def sts_edge(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    """Mean STS of the edge model's answers (original vs released values)."""
    res = _cloud_results(y_pred)
    return _mean(sts([(r["edge_answer_original"], r["edge_answer_protected"]) for r in res]))


def numeric_error_cloud(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    """Mean |number in the cloud answer - true value| / Δf over the numeric templates (truth from y)."""
    errs = []
    for truth, p in zip(list(y_true), y_pred):
        r = p[3] if isinstance(p, (list, tuple)) and len(p) == 4 else None
        if not isinstance(r, dict) or str(truth).strip() == "":
            continue
        errs.append(numeric_error(r["answer"], float(truth), float(r["delta_f"])) or 0.0)
    return _mean(errs)


def attack_event_success(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    """Share of samples whose release let the attacker infer the sensitive event (balanced accuracy >= 0.9)."""
    return _mean([float(r["attack"]["event_success"]) for r in _cloud_results(y_pred)])


def epsilon_series(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    """Largest composed ε per series among the releases (inf = no noise)."""
    vals = [r["release"]["epsilon_series"] for r in _cloud_results(y_pred)]
    return max((math.inf if v == "inf" else float(v)) for v in vals) if vals else math.nan


def cloud_share(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    return _mean([float(bool(p[0])) for p in y_pred])
