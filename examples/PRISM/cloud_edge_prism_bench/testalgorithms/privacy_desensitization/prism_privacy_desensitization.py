"""Imported through ``third_party_packages`` so every desensitization method of the library is
registered before the cloud module validates its ``privacy_method``."""
from cloud_edge_privacy.desensitization import list_operators

AVAILABLE_METHODS = ["none", *list_operators()]
