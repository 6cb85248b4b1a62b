"""Library classes behind the Ianvs ``federatedlearning`` modules of the federated detector example.

Ianvs (1d3da5b, ``if_mode_llm: true``) deep-copies one ``basemodel`` estimator per client, calls
``train((x_list, y_list), None, device_id=..., client_id=k)`` on each client once per round (no round
number is passed: the estimator counts its own rounds), collects ``get_weights()`` into Sedna
``AggClient``s, calls ``aggregate(clients)`` and sends the result to every client with ``set_weights``;
after the last round it calls ``predict([str(x), ...])`` on client 0. A record is
``{"question": <document text>, "answer": <JSON of the gold TAB document>}``; gold labels are read in
``train`` only (client side) and by the metrics.

What leaves a client (``get_weights``) is ``{"base": global weights it started from, "update": release}``
where the release is the clipped+noised update under local DP. A client not sampled this round
(Bernoulli(participation), deterministic in seed, round and client id) sends ``update = None``.
"""
from __future__ import annotations

import json
import math
import secrets
from typing import Any, Dict, List, Optional, Sequence

import numpy as np
import torch

from ..datasets.tab import TabDocument, parse_tab_documents
from .client import local_update
from .methods import Method, client_seed
from .model import ModelConfig, get_flat, make_windows, new_model, predict_spans, set_flat
from .privacy import client_mechanism, make_aggregator, run_report
from .server import make_server
from .simulation import FedConfig, gold_view

_DP_KINDS = ("none", "ldp_paper", "ldp_accounted", "dpsgd")


def _docs_from_answers(texts: Sequence[Any], answers: Sequence[Any]) -> List[TabDocument]:
    raws = []
    for i, (t, a) in enumerate(zip(texts, answers)):
        g = json.loads(a) if isinstance(a, str) else dict(a)
        raws.append({"doc_id": str(g.get("doc_id") or f"doc{i}"), "text": str(t), "annotations": {a: {"entity_mentions": ms} for a, ms in g["annotations"].items()}})
    return parse_tab_documents(raws, "<ianvs train partition>")


class DetectorClient:
    """One edge site's estimator (the ``basemodel`` module)."""

    def __init__(self, seed: int = 0, local_epochs: int = 1, learning_rate: float = 3e-3, batch_size: int = 16,
                 participation: float = 0.8, dp: str = "none", epsilon: float = math.inf, theta: float = 1.0,
                 rounds: int = 10, dpsgd_clip: float = 1.0, threshold: float = 0.5, smoke: bool = False,
                 model: str = "hashed_cnn") -> None:
        if dp not in _DP_KINDS:
            raise ValueError(f"basemodel hyperparameter dp={dp!r}: expected one of {_DP_KINDS}")
        epsilon = float(epsilon)
        if dp != "none" and not math.isfinite(epsilon):
            raise ValueError(f"basemodel hyperparameter dp={dp!r} needs a finite epsilon")
        if dp == "none" and math.isfinite(epsilon):
            raise ValueError("basemodel hyperparameter epsilon is set but dp is 'none' (no budget to spend it on)")
        self.cfg: ModelConfig = (FedConfig.smoke(model) if smoke else FedConfig().with_model(model)).model
        self.seed, self.local_epochs, self.lr, self.batch_size = int(seed), int(local_epochs), float(learning_rate), int(batch_size)
        self.participation, self.dp, self.epsilon, self.theta = float(participation), dp, epsilon, float(theta)
        self.rounds, self.dpsgd_clip, self.threshold = int(rounds), float(dpsgd_clip), float(threshold)
        self.model = new_model(self.cfg, self.seed)
        self.global_flat = get_flat(self.model)
        self.round = 0
        self.release: Optional[torch.Tensor] = None
        self.privacy: Dict[str, Any] = {}

    def _method(self) -> Method:
        """The client side of the composition (the aggregator is the ``aggregation`` module's business)."""
        return Method(f"ianvs-{self.dp}", "federated", "fedavg", "none" if self.dp == "none" else self.dp)

    def _selected(self, client_id: int) -> bool:
        rng = np.random.default_rng([self.seed, self.round, int(client_id), 11])
        return bool(rng.random() < self.participation)

    def train(self, train_data: Any, valid_data: Any = None, **kwargs: Any) -> Dict[str, Any]:
        """One round of local training on this client's partition ``(texts, gold answers)``."""
        client_id = int(kwargs.get("client_id", 0))
        self.round += 1
        x, y = train_data
        docs = _docs_from_answers(list(x), list(y))
        data = make_windows(docs, self.cfg)
        if not self._selected(client_id):
            self.release = None
            return {"num_samples": 0, "selected": False, "round": self.round}
        # a client sees only its own data: δ = 1/|own windows| (the simulation uses the smallest client's)
        delta = 1.0 / max(len(data), 2)
        fed = FedConfig(rounds=self.rounds, local_epochs=self.local_epochs, batch_size=self.batch_size,
                        theta=self.theta, dpsgd_clip=self.dpsgd_clip, model=self.cfg)
        mech = client_mechanism(self._method(), self.epsilon, fed, len(data), delta)
        self.privacy = dict(mech.report)
        res = local_update(self.global_flat, data, self.cfg, epochs=self.local_epochs, lr=self.lr, batch_size=self.batch_size,
                           seed=client_seed(self.seed, self.round - 1, client_id), local_dp=mech.local_dp,
                           dpsgd=mech.dpsgd)
        self.release = res["update"]
        return {"num_samples": len(data), "selected": True, "round": self.round, "loss": res["loss"]}

    def get_weights(self) -> Dict[str, Any]:
        """What leaves the client: the public base weights and the (noised) update, or None if not sampled."""
        return {"base": self.global_flat.numpy().copy(),
                "update": None if self.release is None else self.release.numpy().copy()}

    def set_weights(self, weights: Any) -> None:
        """Receive the new global weights (a list holding one flat vector)."""
        flat = torch.as_tensor(np.asarray(weights[0] if isinstance(weights, (list, tuple)) else weights), dtype=torch.float32)
        self.global_flat = flat.clone()
        set_flat(self.model, self.global_flat)

    def predict(self, data: Sequence[Any], **kwargs: Any) -> List[Dict[str, Any]]:
        """Masks per document text: ``{"masks": [[start, end, category], ...]}``."""
        out = []
        for text in data:
            spans = predict_spans(self.model, str(text), self.threshold)
            out.append({"masks": [[s.start, s.end, s.category] for s in spans]})
        return out

    def save(self, model_path: str) -> str:
        from .model import save_model

        save_model(self.model, model_path, {"method": f"ianvs-{self.dp}", "epsilon": self.epsilon, "seed": self.seed,
                                            "threshold": self.threshold})
        return model_path

    def load(self, model_url: str = "") -> None:
        if model_url:
            from .model import load_model

            self.model, _ = load_model(model_url)
            self.global_flat = get_flat(self.model)

    def evaluate(self, data: Any, **kwargs: Any) -> Dict[str, Any]:
        return {}


class DetectorAggregator:
    """The ``aggregation`` module: FedAvg (sample-weighted) or the paper's Adam-style server (eq. 5), optionally
    wrapped by DP-FTRL's tree noise (``privacy: tree``), built by the same composition as the simulation and the
    Flower apps (:func:`.methods.parse_method` of ``<kind>+<privacy>``, :func:`.privacy.make_aggregator`).

    DP-FTRL here is central DP on the server: the basemodel runs with ``dp: none`` and sends its raw update; this
    module clips each update to ``theta``, adds it to the tree and releases noisy prefix sums, z calibrated so
    that all ``rounds`` are (ε, 10⁻³)-DP for one client taking part in every round. ``client_number`` and
    ``participation`` fix the public denominator m = ceil(participation · client_number). ``randomness``:
    ``benchmark`` draws the tree noise from ``seed`` (as the simulation: reproducible, not private against
    whoever knows the seed), ``deployment`` from the OS CSPRNG."""

    def __init__(self, kind: str = "fedavg", server_lr: Optional[float] = None, privacy: str = "none",
                 epsilon: float = math.inf, rounds: int = 10, client_number: int = 8, participation: float = 0.8,
                 theta: float = 1.0, seed: int = 0, randomness: str = "benchmark") -> None:
        from .methods import parse_method

        name = kind if privacy == "none" else f"{kind}+{privacy}"
        try:
            self.method = parse_method(name)
        except ValueError as exc:
            raise ValueError(f"aggregation hyperparameters kind={kind!r}, privacy={privacy!r}: {exc}") from None
        if self.method.privacy not in ("none", "tree"):
            raise ValueError(f"aggregation hyperparameter privacy={privacy!r}: the server applies 'none' or 'tree' "
                             "(DP-FTRL); local DP and DP-SGD are the basemodel's 'dp'")
        if randomness not in ("benchmark", "deployment"):
            raise ValueError(f"aggregation hyperparameter randomness={randomness!r}: expected benchmark or deployment")
        self.epsilon = float(epsilon)
        self.method.check_epsilon(self.epsilon)
        self.kind, self.seed, self.randomness = kind, int(seed), randomness
        lr = server_lr if server_lr is not None else (1.0 if kind == "fedavg" else 3e-3)
        self.fed = FedConfig(rounds=int(rounds), n_clients=int(client_number), participation=float(participation),
                             theta=float(theta), server_lr_fedavg=float(lr), server_lr_fedadam=float(lr))
        self.server: Any = None if self.method.privacy == "tree" else make_server(kind, float(lr))
        self.privacy: Dict[str, Any] = run_report(self.method, self.epsilon, self.fed, [1])
        self.rounds = 0

    def _server_for(self, base: torch.Tensor) -> Any:
        """DP-FTRL needs the initial weights: built at the first round."""
        if self.server is None:
            gen = torch.Generator().manual_seed(self.seed * 7 + 3 if self.randomness == "benchmark"
                                                else secrets.randbits(62))
            self.server = make_aggregator(self.method, self.epsilon, self.fed, base, gen)
        return self.server

    def aggregate(self, clients: Sequence[Any]) -> List[np.ndarray]:
        """New global weights from the clients' ``{"base", "update"}`` (clients with no update are skipped)."""
        if not clients:
            raise ValueError("aggregate() got no clients")
        base = torch.as_tensor(np.asarray(clients[0].weights["base"]), dtype=torch.float32)
        ups = [(torch.as_tensor(np.asarray(c.weights["update"]), dtype=torch.float32), float(c.num_samples))
               for c in clients if c.weights.get("update") is not None and c.num_samples > 0]
        self.rounds += 1
        if self.method.privacy == "tree" and self.rounds > self.fed.rounds:
            raise ValueError(f"aggregation round {self.rounds} > hyperparameter rounds={self.fed.rounds}: DP-FTRL's noise "
                             "is calibrated for that many rounds (set it to the testenv's round)")
        server = self._server_for(base)
        if self.method.privacy == "tree":  # the tree advances every round, with or without updates
            return [server.step(base, ups).numpy()]
        new = server.step(base, ups) if ups else base
        return [new.numpy()]


class DetectorKDAggregator(DetectorAggregator):
    """PrivateAI's server: FedAvg / eq. 5 aggregation, then every ``kd_interval`` rounds knowledge distillation on
    the public proxy set, labelled by the cloud model once and saved in ``teacher_labels``
    (``scripts/run_federated_bench.py`` writes it). Public data only: no privacy cost for the clients.
    ``background``: the public background knowledge (default ``$CEP_TAB_DIR/background_knowledge.json``)."""

    def __init__(self, kind: str = "fedadam", server_lr: Optional[float] = None, kd_interval: int = 2,
                 kd_mu: float = 0.9, kd_teacher_weight: float = 0.5, kd_epochs: int = 1, kd_lr: float = 3e-3,
                 teacher_labels: str = "./examples/TAB/federated_privacy_detector_bench/results/teacher_labels.json",
                 background: str = "", smoke: bool = False, seed: int = 0, model: str = "hashed_cnn") -> None:
        import os

        from .distill import KDConfig, ProxyDistiller

        super().__init__(kind, server_lr)
        background = background or os.path.join(os.environ.get("CEP_TAB_DIR", "data/tab"),
                                                 "background_knowledge.json")
        cfg = (FedConfig.smoke(model) if smoke else FedConfig().with_model(model)).model  # as the basemodel's
        kd = KDConfig(interval=int(kd_interval), mu=float(kd_mu), teacher_weight=float(kd_teacher_weight),
                      epochs=int(kd_epochs), lr=float(kd_lr))
        self.distiller = ProxyDistiller(teacher_labels, background, cfg, kd, int(seed))

    def aggregate(self, clients: Sequence[Any]) -> List[np.ndarray]:
        out = super().aggregate(clients)
        return [self.distiller.after_round(self.rounds, out[0])]


def to_record(doc: TabDocument) -> Dict[str, str]:
    """One JSONL record for the example: ``question`` = text, ``answer`` = gold document as JSON."""
    g = gold_view(doc)
    g["doc_id"] = doc.doc_id
    return {"question": doc.text, "answer": json.dumps(g, ensure_ascii=False)}


def _gold_and_masks(y_true: Sequence[Any], y_pred: Sequence[Any]) -> List[Any]:
    pairs = []
    for t, p in zip(y_true, y_pred):
        g = json.loads(t) if isinstance(t, str) else dict(t)
        pairs.append((g, (p or {}).get("masks") or []))
    return pairs


def metric_counts(y_true: Sequence[Any], y_pred: Sequence[Any]) -> Dict[str, float]:
    """TAB counts over the test set, plus ``PSR`` (:mod:`..metrics.psr`)."""
    from ..metrics.psr import psr_scores

    pairs = _gold_and_masks(y_true, y_pred)
    return psr_scores([g for g, _ in pairs], [m for _, m in pairs], digits=12)


def fed_psr(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    """PSR: share of DIRECT+QUASI gold entities all of whose mentions are masked (TAB dev)."""
    return float(metric_counts(y_true, y_pred)["PSR"])


def fed_token_precision(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    """TAB token precision of the predicted masks."""
    return float(metric_counts(y_true, y_pred)["token_precision"])


def fed_token_recall(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    """TAB token recall of the predicted masks."""
    return float(metric_counts(y_true, y_pred)["token_recall"])
