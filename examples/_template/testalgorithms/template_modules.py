"""The template scenario's Ianvs modules: the library's edge module, cloud module (the whole edge
pipeline: protect, egress guard, audit, call, restore) and fixed router, registered under this
scenario's names.

Ianvs imports module files by bare file name: a copied scenario renames this file and the aliases.
"""
import os

from cloud_edge_privacy.bench.ianvs_modules import CloudModule, EdgeModule
from cloud_edge_privacy.registry import ClassFactory, ClassType
from cloud_edge_privacy.routing.routers import FixedRouter

# Sedna's framework-free edge backend (docs/ianvs-contract.md §5)
os.environ["BACKEND_TYPE"] = "NONE"


@ClassFactory.register(ClassType.GENERAL, alias="TemplateEdgeModel")
class TemplateEdgeModel(EdgeModule):
    """Edge route: the llama.cpp model and the sample's privacy profile."""


@ClassFactory.register(ClassType.GENERAL, alias="TemplateCloudModel")
class TemplateCloudModel(CloudModule):
    """Cloud route of the edge pipeline."""


@ClassFactory.register(ClassType.HEM, alias="TemplateRouter")
class TemplateRouter(FixedRouter):  # pylint: disable=too-few-public-methods
    """Always one route; replace by EdgeConfidenceRouter or PrismGateRouter for a routed scenario.
    """
