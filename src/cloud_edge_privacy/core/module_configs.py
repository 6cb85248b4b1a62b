"""Validated hyperparameters of every module (docs/design.md invariant 6).

Unknown or misspelled keys, wrong types, ε for a method without a budget and non-finite or non-positive ε
are errors that name the YAML file and key, raised before any model loads.
"""
from __future__ import annotations

import difflib
import math
import re
from typing import Any, Dict, Literal, Optional, Type

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..errors import ConfigError

_ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", protected_namespaces=())


def _positive_finite(name: str, v: Optional[float]) -> Optional[float]:
    if v is None:
        return v
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {v}")
    return v


class EdgeModelConfig(_Strict):
    """The edge LLM (llama.cpp) and the detector preset of the edge profile."""

    model: str = "qwen2.5-coder-0.5b-instruct"
    n_ctx: int = Field(4096, ge=256)
    max_tokens: int = Field(128, ge=1)
    temperature: float = Field(0.0, ge=0.0)
    seed: int = 42
    n_threads: Optional[int] = Field(None, ge=1)
    cache: bool = True
    detector: str = "default"


class BudgetConfig(_Strict):
    """Limits per kind of ε; a kind left out (None) is not limited by this budget.  Kinds never add up."""

    pure: Optional[float] = None
    approximate: Optional[float] = None
    delta: float = Field(1e-5, gt=0, lt=1)
    metric: Optional[float] = None

    @field_validator("pure", "approximate", "metric")
    @classmethod
    def _finite(cls, v: Optional[float], info: Any) -> Optional[float]:
        return _positive_finite(info.field_name, v)


class CloudModelConfig(_Strict):
    """The cloud path: privacy method and its parameters, randomness, budgets and the endpoint."""

    privacy_method: str = "placeholder"
    epsilon: Optional[float] = None
    method_params: Dict[str, Any] = Field(default_factory=dict)
    detector: str = "default"
    randomness: Literal["benchmark", "deployment"] = "benchmark"
    seed: int = 42
    budget_per_document: Optional[BudgetConfig] = None
    budget_per_session: Optional[BudgetConfig] = None
    max_tokens: int = Field(128, ge=1)
    temperature: float = Field(0.0, ge=0.0)
    timeout_s: float = Field(300.0, gt=0)
    max_retries: int = Field(3, ge=0, le=10)
    base_url_env: str = "CEP_CLOUD_BASE_URL"
    api_key_env: str = "CEP_CLOUD_API_KEY"
    model_env: str = "CEP_CLOUD_MODEL"
    local_model: str = "qwen2.5-coder-0.5b-instruct"
    cache: bool = True
    refine_model: str = "qwen2.5-coder-0.5b-instruct"
    # The edge refines the cloud's answer on the plain cloud route too (PRISM's Uniform/Selective LDP
    # baselines: noised prompt to the cloud, answer repaired on the edge with the original prompt).
    edge_refinement: bool = False

    @field_validator("epsilon")
    @classmethod
    def _finite(cls, v: Optional[float], info: Any) -> Optional[float]:
        return _positive_finite(info.field_name, v)

    @field_validator("base_url_env", "api_key_env", "model_env")
    @classmethod
    def _env_name(cls, v: str, info: Any) -> str:
        if not _ENV_NAME.match(v):
            raise ValueError(f"{info.field_name} must be the NAME of an environment variable (e.g. "
                             f"CEP_CLOUD_API_KEY), never a value")
        return v

    @model_validator(mode="after")
    def _method(self) -> "CloudModelConfig":
        from ..desensitization import list_operators
        from ..desensitization.base import operator_spec, validate_params
        from .gateway import NO_PROTECTION

        known = [NO_PROTECTION, *list_operators()]
        if self.privacy_method not in known:
            raise ValueError(f"privacy_method {self.privacy_method!r} is not one of {known}")
        if self.privacy_method == NO_PROTECTION:
            if self.epsilon is not None or self.method_params:
                raise ValueError("privacy_method 'none' takes no epsilon and no method_params")
            return self
        spec = operator_spec(self.privacy_method)
        if self.epsilon is not None and not spec.budgeted:
            budgeted = [m for m in list_operators() if operator_spec(m).budgeted]
            raise ValueError(f"epsilon is given but {self.privacy_method!r} has no privacy budget "
                             f"(methods with one: {budgeted})")
        params = dict(self.method_params)
        if self.epsilon is not None:
            params["epsilon"] = self.epsilon
        validate_params(self.privacy_method, params)
        return self

    def operator_params(self) -> Dict[str, Any]:
        params = dict(self.method_params)
        if self.epsilon is not None:
            params["epsilon"] = self.epsilon
        return params


class EdgeConfidenceRouterConfig(_Strict):
    confidence_threshold: float = Field(0.8, ge=0.0)  # confidence is in [0, 1]; above 1 sends everything on
    max_edge_words: int = Field(400, ge=1)


class PrismGateRouterConfig(_Strict):
    edge_risk_threshold: Optional[float] = None
    gate_path: Optional[str] = None
    detector: str = "default"

    @field_validator("edge_risk_threshold", mode="before")
    @classmethod
    def _none(cls, v: Any) -> Any:
        return None if v in ("none", "None") else v


class FixedRouterConfig(_Strict):
    route: Literal["edge", "cloud", "collaborative"] = "cloud"


def validate_config(model: Type[BaseModel], values: Dict[str, Any], where: str) -> BaseModel:
    """``model(**values)`` or a :class:`ConfigError` naming ``where`` (file and module) and each bad key."""
    try:
        return model.model_validate(values or {})
    except ValidationError as exc:
        raise ConfigError(f"{where}: {describe_errors(exc, model)}") from None


def describe_errors(exc: ValidationError, model: Type[BaseModel]) -> str:
    known = list(model.model_fields)
    parts = []
    for err in exc.errors():
        key = ".".join(str(p) for p in err.get("loc", ()))
        if not key:  # a rule across several keys (e.g. epsilon for a method without a budget)
            parts.append(str(err.get("msg", "")).removeprefix("Value error, "))
        elif err.get("type") == "extra_forbidden":
            close = difflib.get_close_matches(str(err["loc"][-1]), known, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else f" (known keys: {', '.join(known)})"
            parts.append(f"unknown hyperparameter '{key}'{hint}")
        else:
            msg = str(err.get("msg", "")).removeprefix("Value error, ")
            parts.append(f"hyperparameter '{key}': {msg}")
    return "; ".join(parts)
