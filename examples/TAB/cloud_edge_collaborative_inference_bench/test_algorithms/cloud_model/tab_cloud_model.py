"""Ianvs ``cloudmodel`` module: the privacy gateway plus an OpenAI-compatible cloud call.

Sedna hands this module the raw sample, so desensitization happens here, on the edge side, before
the HTTP request.  Endpoint, model and key come from the environment variables named in the YAML.
"""
from cloud_edge_privacy.models.openai_cloud import OpenAICloudModel
from cloud_edge_privacy.registry import ClassFactory, ClassType


@ClassFactory.register(ClassType.GENERAL, alias="TabPrivacyCloudModel")
class TabPrivacyCloudModel(OpenAICloudModel):
    """Cloud model; hyperparameters are OpenAICloudModel's keyword arguments."""
