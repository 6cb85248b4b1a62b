"""Ianvs aggregation modules: FedAvg or the paper's Adam-style server, and PrivateAI's server with
knowledge distillation (library: cloud_edge_privacy.federated.ianvs_modules)."""
# pylint: disable=too-few-public-methods
from cloud_edge_privacy.federated.ianvs_modules import DetectorAggregator, DetectorKDAggregator
from cloud_edge_privacy.registry import ClassFactory, ClassType

# Sedna's ClassType.FL_AGG is "aggregation"; our local registry has no attribute for it.
_FL_AGG = getattr(ClassType, "FL_AGG", "aggregation")


@ClassFactory.register(_FL_AGG, alias="FederatedDetectorAggregator")
class FederatedDetectorAggregator(DetectorAggregator):
    """Registered under the alias the algorithm YAMLs name."""


@ClassFactory.register(_FL_AGG, alias="FederatedDetectorKDAggregator")
class FederatedDetectorKDAggregator(DetectorKDAggregator):
    """PrivateAI's server with distillation, registered under the alias the algorithm YAMLs name."""
