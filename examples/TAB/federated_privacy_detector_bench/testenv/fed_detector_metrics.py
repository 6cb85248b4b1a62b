"""Ianvs testenv metrics of the federated detector on TAB dev (PSR, token precision and recall)."""
from cloud_edge_privacy.federated import ianvs_modules
from cloud_edge_privacy.registry import ClassFactory, ClassType

for _name in ("fed_psr", "fed_token_precision", "fed_token_recall"):
    ClassFactory.register(ClassType.GENERAL, alias=_name)(getattr(ianvs_modules, _name))
