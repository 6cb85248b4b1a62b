"""Ianvs ``cloudmodel`` module: the edge pipeline's cloud route.

Protect, egress guard, audit, call, restore.  Sedna hands this module the raw sample, so
protection runs here, on the edge side, before any HTTP request.  Hyperparameters:
``cloud_edge_privacy.core.module_configs.CloudModelConfig`` (unknown keys are errors).
"""
from cloud_edge_privacy.bench.ianvs_modules import CloudModule
from cloud_edge_privacy.registry import ClassFactory, ClassType


@ClassFactory.register(ClassType.GENERAL, alias="TabPrivacyCloudModel")
class TabPrivacyCloudModel(CloudModule):
    """Cloud route of the edge pipeline."""
