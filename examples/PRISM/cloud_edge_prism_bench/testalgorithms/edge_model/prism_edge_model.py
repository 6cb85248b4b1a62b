"""Ianvs ``edgemodel`` module of the PRISM example: the llama.cpp edge model, each request metered.

Hyperparameters: ``cloud_edge_privacy.core.module_configs.EdgeModelConfig`` (unknown keys are
errors)."""
import os

from cloud_edge_privacy.bench.prism_modules import PrismEdgeModule
from cloud_edge_privacy.registry import ClassFactory, ClassType

# Sedna picks the edge backend from BACKEND_TYPE; a value it does not know gives the generic
# backend.
os.environ["BACKEND_TYPE"] = "NONE"


@ClassFactory.register(ClassType.GENERAL, alias="PrismLlamaEdgeModel")
class PrismLlamaEdgeModel(PrismEdgeModule):
    """Edge route (Edge-only, and PRISM's edge mode)."""
