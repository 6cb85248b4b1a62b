"""The privacy gateway as a registered class, for use outside the cloud module.

Loaded through ``third_party_packages`` in test_algorithms.yaml so that every desensitization method
of the library is registered before the cloud module is built.  The method itself is chosen by the
cloud module's ``privacy_method`` hyperparameter.
"""
from cloud_edge_privacy.desensitization import list_operators
from cloud_edge_privacy.gateway import PrivacyGateway
from cloud_edge_privacy.registry import ClassFactory, ClassType

AVAILABLE_METHODS = ["none", *list_operators()]


@ClassFactory.register(ClassType.GENERAL, alias="TabPrivacyGateway")
class TabPrivacyGateway(PrivacyGateway):
    """``TabPrivacyGateway(method=..., seed=...).protect(text)`` -> desensitized text and mapping."""
