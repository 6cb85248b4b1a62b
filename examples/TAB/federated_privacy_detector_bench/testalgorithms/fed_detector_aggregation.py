"""Ianvs aggregation module: FedAvg or the paper's Adam-style server (library: cloud_edge_privacy.federated)."""
from cloud_edge_privacy.federated.ianvs_modules import DetectorAggregator
from cloud_edge_privacy.registry import ClassFactory, ClassType

# Sedna's ClassType.FL_AGG is "aggregation"; our local registry has no attribute for it.
_FL_AGG = getattr(ClassType, "FL_AGG", "aggregation")


@ClassFactory.register(_FL_AGG, alias="FederatedDetectorAggregator")
class FederatedDetectorAggregator(DetectorAggregator):
    """Registered under the alias the algorithm YAMLs name."""
