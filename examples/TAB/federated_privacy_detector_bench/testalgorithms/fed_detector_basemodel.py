"""Ianvs basemodel module: one edge site's detector training
(library: cloud_edge_privacy.federated)."""
# pylint: disable=too-few-public-methods
import os

from cloud_edge_privacy.federated.ianvs_modules import DetectorClient
from cloud_edge_privacy.registry import ClassFactory, ClassType

# Sedna picks a backend from BACKEND_TYPE when the job is built (TensorFlow if unset); Ianvs then
# replaces the wrapped estimator by a plain deep copy, so the framework-free backend is enough.
os.environ.setdefault("BACKEND_TYPE", "NONE")


@ClassFactory.register(ClassType.GENERAL, alias="FederatedDetectorClient")
class FederatedDetectorClient(DetectorClient):
    """Registered under the alias the algorithm YAMLs name."""
