"""Ianvs ``edgemodel`` module: registers the llama.cpp edge model of the cloud_edge_privacy library."""
import os

from cloud_edge_privacy.models.llama_edge import LlamaEdgeModel
from cloud_edge_privacy.registry import ClassFactory, ClassType

# Sedna picks the edge backend from BACKEND_TYPE; any value it does not know gives the generic,
# framework-free backend (TensorFlow would otherwise be imported).  See ianvs-contract.md §5.
os.environ["BACKEND_TYPE"] = "NONE"


@ClassFactory.register(ClassType.GENERAL, alias="TabLlamaEdgeModel")
class TabLlamaEdgeModel(LlamaEdgeModel):
    """Edge model; hyperparameters are LlamaEdgeModel's keyword arguments."""

    def __init__(self, **hyperparameters):
        super().__init__(**hyperparameters)
        # Sedna resolves model_path and calls load(model_url=<file>) when it is an existing file.
        os.environ["model_path"] = self.path
