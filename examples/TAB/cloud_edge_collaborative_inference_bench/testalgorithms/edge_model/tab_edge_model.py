"""Ianvs ``edgemodel`` module: the llama.cpp edge model and the sample's privacy profile.

Hyperparameters: ``cloud_edge_privacy.core.module_configs.EdgeModelConfig`` (unknown keys are
errors).
"""
import os

from cloud_edge_privacy.bench.ianvs_modules import EdgeModule
from cloud_edge_privacy.registry import ClassFactory, ClassType

# Sedna picks the edge backend from BACKEND_TYPE; any value it does not know gives the generic,
# framework-free backend (TensorFlow would otherwise be imported).  See the library's
# docs/ianvs-contract.md §5.
os.environ["BACKEND_TYPE"] = "NONE"


@ClassFactory.register(ClassType.GENERAL, alias="TabLlamaEdgeModel")
class TabLlamaEdgeModel(EdgeModule):
    """Edge route of the edge pipeline."""
