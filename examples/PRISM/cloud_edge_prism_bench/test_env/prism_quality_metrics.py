"""Ianvs testenv metrics for the PRISM scenario: LLM-judge quality and route shares."""
from cloud_edge_privacy.metrics import judge
from cloud_edge_privacy.registry import ClassFactory, ClassType

for _name, _fn in {
    "llm_judge": judge.llm_judge,
    "edge_share": judge.edge_share,
    "collaborative_share": judge.collaborative_share,
    "cloud_share": judge.cloud_share,
}.items():
    ClassFactory.register(ClassType.GENERAL, alias=_name)(_fn)
