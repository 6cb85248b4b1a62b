"""Ianvs testenv metrics on privacy, each called as f(y_true, y_pred) over all samples of a test case."""
from cloud_edge_privacy.metrics import attacks, privacy, semantic, tab_official, trir
from cloud_edge_privacy.registry import ClassFactory, ClassType

for _name, _fn in {
    "pdr": privacy.pdr,
    "sels": privacy.sels,
    "leak_direct": privacy.leak_direct,
    "er_di": tab_official.er_di,
    "er_qi": tab_official.er_qi,
    "token_recall": tab_official.token_recall,
    "token_precision": tab_official.token_precision,
    "iar": attacks.iar,
    "iar_coref_leak": attacks.coref_leak_rate,
    "iar_reidentification": attacks.reidentification_rate,  # oracle linking (gold QIs): an upper bound
    "iar_trir": trir.trir,
    "trir_original": trir.trir_original,
    "iar_inference": attacks.inference_attack_rate,
    "cpp": semantic.cpp,
}.items():
    ClassFactory.register(ClassType.GENERAL, alias=_name)(_fn)
