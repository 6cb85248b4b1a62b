"""Ianvs testenv metrics of the PRISM example, each called as f(y_true, y_pred) over one test case."""
from cloud_edge_privacy.metrics import edge_energy, judge, performance, privacy
from cloud_edge_privacy.registry import ClassFactory, ClassType

for _name, _fn in {
    "completion_time_s": edge_energy.completion_time_s,
    "edge_energy_j": edge_energy.edge_energy_j,
    "llm_judge": judge.llm_judge,
    "edge_share": judge.edge_share,
    "collaborative_share": judge.collaborative_share,
    "cloud_share": judge.cloud_share,
    "leak_direct": privacy.leak_direct,
    "pdr": privacy.pdr,
    "cloud_tokens": performance.cloud_tokens,
    "n_completed": performance.n_completed,
    "n_failed": performance.n_failed,
}.items():
    ClassFactory.register(ClassType.GENERAL, alias=_name)(_fn)
