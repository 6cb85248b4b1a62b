"""Imported through ``third_party_packages``: registers every privacy method of the library.

Importing the library's desensitization package registers all its operators before the cloud
module validates its ``privacy_method`` hyperparameter (the method is chosen there).
"""
from cloud_edge_privacy.desensitization import list_operators

AVAILABLE_METHODS = ["none", *list_operators()]
