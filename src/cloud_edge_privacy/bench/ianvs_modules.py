"""The classes the Ianvs example registers: thin adapters from Sedna's call shapes to the edge pipeline.

Each class validates its hyperparameters (``Config``) in ``__init__`` and does no privacy logic itself.  This
is the Ianvs boundary: the pipeline's typed :class:`~.results.SampleResult` becomes the plain dict that Sedna
copies and the metrics read (``to_dict``; ``metrics.samples.unpack`` reads it back with ``from_dict``).
"""
from __future__ import annotations

import os
from typing import Any, Dict, Optional

from ..core.context import CONTEXTS, RunContext
from ..core.module_configs import CloudModelConfig, EdgeModelConfig, validate_config
from ..core.pipeline import EdgePipeline, edge_inference


class EdgeModule:
    """Ianvs ``edgemodel``: answers on the edge and profiles the sample (shared with router and gateway)."""

    Config = EdgeModelConfig

    def __init__(self, **hyperparameters: Any) -> None:
        from ..models.llama_edge import LlamaEdgeModel

        self.config: EdgeModelConfig = validate_config(EdgeModelConfig, hyperparameters,
                                                       f"edgemodel {type(self).__name__}")  # type: ignore[assignment]
        c = self.config
        self.llm = LlamaEdgeModel(model=c.model, n_ctx=c.n_ctx, max_tokens=c.max_tokens, temperature=c.temperature,
                                  seed=c.seed, n_threads=c.n_threads, cache=c.cache)
        # Sedna resolves model_path and calls load(model_url=<file>) when it is an existing file (contract §5).
        os.environ["model_path"] = self.llm.path

    @property
    def path(self) -> str:
        return self.llm.path

    def load(self, model_url: Optional[str] = None, **_: Any) -> None:
        self.llm.load()
        CONTEXTS.get().detector(self.config.detector).analyze("Warm-up: Ms Anna Berg, 1 May 2001, Oslo.")

    def predict(self, data: Any, **kwargs: Any) -> Dict[str, Any]:
        return edge_inference(data, self.llm, CONTEXTS.get().detector(self.config.detector)).to_dict()

    def cleanup(self) -> None:
        self.llm.close()


class CloudModule:
    """Ianvs ``cloudmodel``: Sedna hands it the raw sample, so it runs the whole edge pipeline for the cloud
    route (protect, guard, audit, call, restore, refine); it never talks HTTP itself."""

    Config = CloudModelConfig

    def __init__(self, **hyperparameters: Any) -> None:
        self.config: CloudModelConfig = validate_config(CloudModelConfig, hyperparameters,
                                                        f"cloudmodel {type(self).__name__}")  # type: ignore[assignment]
        self._pipelines: Dict[str, EdgePipeline] = {}
        # Detection models load now, so that loading is not per-sample latency.
        self.pipeline(CONTEXTS.get()).warm_up()

    def pipeline(self, ctx: RunContext) -> EdgePipeline:
        key = str(ctx.output_dir)
        if key not in self._pipelines:
            self._pipelines[key] = EdgePipeline(ctx, self.config)
        return self._pipelines[key]

    def inference(self, data: Any, **kwargs: Any) -> Dict[str, Any]:
        return self.pipeline(CONTEXTS.get()).cloud(data).to_dict()

    def cleanup(self) -> None:
        self._pipelines.clear()
