"""Ianvs ``cloudmodel`` module of the PRISM example: protect, egress guard, audit, cloud call,
restore and edge refinement (PRISM's sketch, or the LDP baselines' draft), each request metered.
Sedna hands it the raw prompt, so protection runs here, on the edge side, before any HTTP request.

Hyperparameters: ``cloud_edge_privacy.core.module_configs.CloudModelConfig`` (unknown keys are
errors)."""
from cloud_edge_privacy.bench.prism_modules import PrismCloudModule
from cloud_edge_privacy.registry import ClassFactory, ClassType


@ClassFactory.register(ClassType.GENERAL, alias="PrismPrivacyCloudModel")
class PrismPrivacyCloudModel(PrismCloudModule):
    """Cloud and collaborative routes."""
