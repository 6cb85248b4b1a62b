"""Sedna 0.6.0.1 ``JointInference`` call semantics (docs/ianvs-contract.md §4-§5), without Sedna."""
from __future__ import annotations

import copy
import inspect
import os
import warnings
from typing import Any, List

from ..errors import ConfigError

MINING_THEN_INFERENCE = "mining-then-inference"
INFERENCE_THEN_MINING = "inference-then-mining"


def _resolve_model_path() -> str:
    for var in ("model_path", "MODEL_PATH"):
        if os.environ.get(var):
            return os.environ[var]
    raise ConfigError("the edge model did not set env 'model_path' (Sedna fails with FileExistsError)")


def _looks_like_hf_id(p: str) -> bool:
    return p.count("/") == 1 and not os.path.exists(p) and not p.startswith((".", "/"))


class EdgeBackend:
    """Sedna's generic ``BackendBase`` as seen by the edge model: ``load`` then filtered ``predict``."""

    def __init__(self, estimator: Any) -> None:
        if callable(estimator) and not inspect.isclass(estimator):
            # Sedna replaces a callable estimator by its return value; refuse that trap explicitly.
            raise ConfigError(f"edge model {type(estimator).__name__} defines __call__; Sedna would call it")
        self.estimator = estimator
        path = _resolve_model_path()
        if os.path.isfile(path):
            estimator.load(model_url=path)
        elif os.path.isdir(path):
            warnings.warn(f"model_path {path} is a directory: Sedna would copy it whole to the temp dir", stacklevel=2)
            estimator.load(model_url=path)
        elif not _looks_like_hf_id(path):
            raise ConfigError(f"{path} miss (edge model_path must be an existing file or an HF id org/name)")

    def predict(self, data: Any, **kwargs: Any) -> Any:
        fn = self.estimator.predict
        params = inspect.signature(fn).parameters
        if "kwargs" not in params:
            kwargs = {k: v for k, v in kwargs.items() if k in params}
        return fn(data, **kwargs)


class JointInference:
    def __init__(self, edge: Any, cloud: Any, hem: Any) -> None:
        self.edge = EdgeBackend(edge)
        self.cloud = cloud
        self.hem = hem

    def inference(self, x: Any, mining_mode: str) -> List[Any]:
        """Return ``[is_hard_example, result, edge_result, cloud_result]`` exactly as Sedna does."""
        if mining_mode == INFERENCE_THEN_MINING:
            res = self.edge.predict(x, mining_mode=mining_mode)
            hard = self.hem(copy.deepcopy(res))
            cloud = self.cloud.inference(x, post_process=None, mining_mode=mining_mode) if hard else None
            return [hard, copy.deepcopy(cloud) if hard else copy.deepcopy(res), res, cloud]
        if mining_mode == MINING_THEN_INFERENCE:
            hard = self.hem(x)
            if hard:
                cloud = self.cloud.inference(x, post_process=None, mining_mode=mining_mode)
                return [hard, copy.deepcopy(cloud), None, cloud]
            res = self.edge.predict(x, mining_mode=mining_mode)
            return [hard, copy.deepcopy(res), res, None]
        raise ValueError(f"unsupported mining mode {mining_mode!r}")
