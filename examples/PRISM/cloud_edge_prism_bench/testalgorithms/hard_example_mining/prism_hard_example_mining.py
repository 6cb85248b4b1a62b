"""Ianvs ``hard_example_mining`` module of the PRISM example: the soft gate and the fixed routes."""
# A Sedna router is a callable (its interface is __call__), not a class with public methods.
# pylint: disable=too-few-public-methods
from cloud_edge_privacy.registry import ClassFactory, ClassType
from cloud_edge_privacy.routing.routers import FixedRouter, PrismGateRouter


@ClassFactory.register(ClassType.HEM, alias="PrismSoftGateRouter")
class PrismSoftGateRouter(PrismGateRouter):
    """PRISM soft gate over edge / collaborative / cloud (top-1 of the softmax)."""


@ClassFactory.register(ClassType.HEM, alias="PrismFixedRouter")
class PrismFixedRouter(FixedRouter):
    """Always one route: the Cloud-only, Edge-only and LDP baselines."""
