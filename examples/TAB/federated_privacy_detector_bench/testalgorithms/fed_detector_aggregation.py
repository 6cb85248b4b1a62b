"""Ianvs aggregation modules: FedAvg or the paper's Adam-style server, and PrivateAI's server with distillation (library: cloud_edge_privacy.federated)."""
from typing import Optional

from cloud_edge_privacy.federated.ianvs_modules import DetectorAggregator
from cloud_edge_privacy.registry import ClassFactory, ClassType

# Sedna's ClassType.FL_AGG is "aggregation"; our local registry has no attribute for it.
_FL_AGG = getattr(ClassType, "FL_AGG", "aggregation")


@ClassFactory.register(_FL_AGG, alias="FederatedDetectorAggregator")
class FederatedDetectorAggregator(DetectorAggregator):
    """Registered under the alias the algorithm YAMLs name."""


@ClassFactory.register(_FL_AGG, alias="FederatedDetectorKDAggregator")
class FederatedDetectorKDAggregator(DetectorAggregator):
    """PrivateAI's server: FedAvg / eq. 5 aggregation, then every ``kd_interval`` rounds knowledge distillation on
    the public proxy set, labelled by the cloud model once and saved in ``teacher_labels``
    (``scripts/run_federated_bench.py`` writes it). Public data only: no privacy cost for the clients."""

    def __init__(self, kind: str = "fedadam", server_lr: Optional[float] = None, kd_interval: int = 2, kd_mu: float = 0.9,
                 kd_teacher_weight: float = 0.5, kd_epochs: int = 1, kd_lr: float = 3e-3,
                 teacher_labels: str = "./examples/TAB/federated_privacy_detector_bench/results/teacher_labels.json",
                 background: str = "", smoke: bool = False, seed: int = 0, model: str = "hashed_cnn") -> None:
        import os

        from cloud_edge_privacy.federated.distill import KDConfig, ProxyDistiller
        from cloud_edge_privacy.federated.simulation import FedConfig

        super().__init__(kind, server_lr)
        background = background or os.path.join(os.environ.get("CEP_TAB_DIR", "data/tab"),
                                                 "background_knowledge.json")
        cfg = (FedConfig.smoke(model) if smoke else FedConfig().with_model(model)).model  # as the basemodel's
        kd = KDConfig(interval=int(kd_interval), mu=float(kd_mu), teacher_weight=float(kd_teacher_weight),
                      epochs=int(kd_epochs), lr=float(kd_lr))
        self.distiller = ProxyDistiller(teacher_labels, background, cfg, kd, int(seed))

    def aggregate(self, clients):
        out = super().aggregate(clients)
        return [self.distiller.after_round(self.rounds, out[0])]
