"""Ianvs ``hard_example_mining`` module: the library's routers (both mining modes)."""
# A Sedna router is a callable (its interface is __call__), not a class with public methods.
# pylint: disable=too-few-public-methods
from cloud_edge_privacy.registry import ClassFactory, ClassType
from cloud_edge_privacy.routing.routers import EdgeConfidenceRouter, FixedRouter, PrismGateRouter


@ClassFactory.register(ClassType.HEM, alias="TabEdgeConfidenceRouter")
class TabEdgeConfidenceRouter(EdgeConfidenceRouter):
    """Edge confidence (inference-then-mining) or task size (mining-then-inference) decides."""


@ClassFactory.register(ClassType.HEM, alias="TabPrismGateRouter")
class TabPrismGateRouter(PrismGateRouter):
    """PRISM soft gate (edge / collaborative / cloud) with the privacy-first risk rule."""


@ClassFactory.register(ClassType.HEM, alias="TabFixedRouter")
class TabFixedRouter(FixedRouter):
    """Always one route (the Cloud-only / Edge-only baselines)."""
