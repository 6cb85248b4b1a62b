"""The Flower apps' logic as plain functions (no ``flwr`` import): settings, one client round, the server loop.

Everything that trains, noises, accounts or aggregates is the library's own code: the method is decoded by
:func:`~cloud_edge_privacy.federated.methods.parse_method`, the client calls
:func:`~cloud_edge_privacy.federated.client.local_update` with the mechanism of
:func:`~cloud_edge_privacy.federated.privacy.client_mechanism`, the server aggregates with
:func:`~cloud_edge_privacy.federated.privacy.make_aggregator`. Partition, client selection, seeds and calibration
are the simulation's, so a Flower run and the in-process simulation of the same method, seed and configuration
give the same global model.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import time
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import secrets

import torch

from ...errors import ConfigError
from ...datasets.tab import TabDocument, load_tab
from ..client import local_update
from ..methods import Method, client_seed, parse_method
from ..model import MODEL_KINDS, Windows, get_flat, make_windows, new_model, save_model, set_flat
from ..privacy import client_mechanism, make_aggregator, run_report
from ..simulation import FedConfig, dirichlet_partition, evaluate_psr, select_clients
#: The run config keys the apps read (``[tool.flwr.app.config]``); any other key is an error.
RUN_CONFIG_KEYS = ("method", "epsilon", "seed", "smoke", "rounds", "local-epochs", "participation", "alpha", "lr",
                   "batch-size", "server-lr-fedavg", "server-lr-fedadam", "theta", "dpsgd-clip", "threshold",
                   "num-clients", "train-path", "dev-path", "max-train-docs", "max-dev-docs", "result-path",
                   "model-path", "threads", "node-wait-seconds", "round-timeout-seconds", "randomness", "model",
                   "secagg", "secagg-num-shares", "secagg-reconstruction-threshold", "secagg-clipping-range",
                   "secagg-quantization-range")


@dataclass(frozen=True)
class Settings:
    """One Flower run, read from the run config (``[tool.flwr.app.config]`` and ``flwr run -c`` overrides)."""

    method: str = "fedavg"
    epsilon: float = math.inf
    seed: int = 0
    cfg: FedConfig = field(default_factory=FedConfig)
    num_clients: int = 0
    train_path: str = ""
    dev_path: str = ""
    max_train_docs: Optional[int] = None
    max_dev_docs: Optional[int] = None
    result_path: str = ""
    model_path: str = ""
    threads: int = 1
    node_wait_seconds: float = 120.0
    round_timeout_seconds: float = 600.0
    # deployment: each node's DP noise and sampling from the OS CSPRNG; benchmark: from ``seed`` (reproducible,
    # equal to the simulation, NOT private against whoever knows the seed)
    randomness: str = "deployment"
    # SecAgg+ (Flower's secaggplus_mod + SecAggPlusWorkflow): the server sees only the sum of the updates
    secagg: bool = False
    secagg_num_shares: int = 3
    secagg_reconstruction_threshold: int = 2
    secagg_clipping_range: float = 8.0
    secagg_quantization_range: int = 4194304

    @property
    def spec(self) -> Method:
        return parse_method(self.method)


def _get(conf: Mapping[str, Any], key: str, default: Any) -> Any:
    value = conf.get(key, default)
    return default if value is None else value


def _epsilon(value: Any) -> float:
    if isinstance(value, str):
        value = value.strip().lower()
        if value in ("inf", "infinity", "none", ""):
            return math.inf
    try:
        eps = float(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"run config 'epsilon' must be a number or 'inf', got {value!r}") from exc
    return math.inf if eps <= 0 else eps


def settings_from_config(run_config: Mapping[str, Any]) -> Settings:
    """Validate the run config; ``smoke = true`` starts from :meth:`FedConfig.smoke` (tiny model)."""
    unknown = sorted(set(run_config) - set(RUN_CONFIG_KEYS))
    if unknown:
        raise ConfigError(f"unknown run config key(s) {unknown}; known: {list(RUN_CONFIG_KEYS)}")
    kind = str(_get(run_config, "model", "hashed_cnn"))
    if kind not in MODEL_KINDS:
        raise ConfigError(f"run config 'model' = {kind!r}: expected one of {MODEL_KINDS}")
    base = FedConfig.smoke(kind) if bool(_get(run_config, "smoke", False)) else FedConfig().with_model(kind)
    cfg = replace(
        base,
        rounds=int(_get(run_config, "rounds", base.rounds)),
        local_epochs=int(_get(run_config, "local-epochs", base.local_epochs)),
        participation=float(_get(run_config, "participation", base.participation)),
        alpha=float(_get(run_config, "alpha", base.alpha)),
        lr=float(_get(run_config, "lr", base.lr)),
        batch_size=int(_get(run_config, "batch-size", base.batch_size)),
        server_lr_fedavg=float(_get(run_config, "server-lr-fedavg", base.server_lr_fedavg)),
        server_lr_fedadam=float(_get(run_config, "server-lr-fedadam", base.server_lr_fedadam)),
        theta=float(_get(run_config, "theta", base.theta)),
        dpsgd_clip=float(_get(run_config, "dpsgd-clip", base.dpsgd_clip)),
        threshold=float(_get(run_config, "threshold", base.threshold)),
    )
    method = str(_get(run_config, "method", "fedavg"))
    epsilon = _epsilon(_get(run_config, "epsilon", "inf"))
    try:
        spec = parse_method(method)
        spec.check_epsilon(epsilon)
    except ValueError as exc:
        raise ConfigError(f"run config 'method' = {method!r}, 'epsilon' = {epsilon}: {exc}") from None
    if spec.layout != "federated" or spec.distill:
        raise ConfigError(f"run config 'method' = {method!r}: the Flower apps run federated methods without "
                          "distillation (fedavg, fedadam, dp_fedavg, dp_ftrl, fedadam_ldp_paper, fedadam_ldp_accounted, "
                          "or a composition <aggregator>+<privacy>)")
    secagg = bool(_get(run_config, "secagg", False))
    if secagg and spec.aggregator != "fedavg":
        raise ConfigError(f"run config 'secagg' = true needs a fedavg aggregator (SecAgg+ delivers a weighted sum; "
                          f"method {method!r} uses {spec.aggregator})")
    if cfg.rounds < 1 or not 0 < cfg.participation <= 1:
        raise ConfigError("run config needs rounds >= 1 and 0 < participation <= 1")
    if secagg and (cfg.participation != 1.0 or spec.privacy not in ("none", "dpsgd")):
        raise ConfigError("run config 'secagg' = true: SecAgg+ runs here take every client each round "
                          "(participation = 1.0) and client-side privacy only (method fedavg, dp_fedavg or "
                          f"fedavg+dpsgd); got participation {cfg.participation}, method {method!r}")
    randomness = str(_get(run_config, "randomness", "deployment"))
    if randomness not in ("deployment", "benchmark"):
        raise ConfigError(f"run config 'randomness' = {randomness!r}: expected 'deployment' or 'benchmark'")
    max_train = int(_get(run_config, "max-train-docs", 0))
    max_dev = int(_get(run_config, "max-dev-docs", 0))
    return Settings(
        method=method, epsilon=epsilon, seed=int(_get(run_config, "seed", 0)), cfg=cfg,
        num_clients=int(_get(run_config, "num-clients", 0)),
        train_path=str(_get(run_config, "train-path", "")), dev_path=str(_get(run_config, "dev-path", "")),
        max_train_docs=max_train or None, max_dev_docs=max_dev or None,
        result_path=str(_get(run_config, "result-path", "")), model_path=str(_get(run_config, "model-path", "")),
        threads=int(_get(run_config, "threads", 1)), randomness=randomness, secagg=secagg,
        secagg_num_shares=int(_get(run_config, "secagg-num-shares", 3)),
        secagg_reconstruction_threshold=int(_get(run_config, "secagg-reconstruction-threshold", 2)),
        secagg_clipping_range=float(_get(run_config, "secagg-clipping-range", 8.0)),
        secagg_quantization_range=int(_get(run_config, "secagg-quantization-range", 4194304)),
        node_wait_seconds=float(_get(run_config, "node-wait-seconds", 120.0)),
        round_timeout_seconds=float(_get(run_config, "round-timeout-seconds", 600.0)),
    )


# --- client side ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class ClientShard:
    """What one SuperNode holds: its partition id and its training windows."""

    partition_id: int
    num_partitions: int
    windows: Windows


def _docs(path: str, limit: Optional[int], what: str) -> List[TabDocument]:
    if not path:
        raise ConfigError(f"no {what} path: set '{what}-path' in the run config or the node config")
    return load_tab(os.path.abspath(path))[:limit]


def load_shard(settings: Settings, node_config: Mapping[str, Any]) -> ClientShard:
    """The node's documents: ``node_config`` may name its own ``train-path``; with ``partition-id`` and
    ``num-partitions`` the file is split as the simulation splits it (Dirichlet over documents, ``seed``)."""
    path = str(node_config.get("train-path") or settings.train_path)
    docs = _docs(path, settings.max_train_docs, "train")
    if "partition-id" in node_config:
        pid, n = int(node_config["partition-id"]), int(node_config.get("num-partitions", 0))
        if not 0 <= pid < n:
            raise ConfigError(f"node config partition-id={pid} num-partitions={n}: need 0 <= partition-id < num-partitions")
        docs = [docs[i] for i in dirichlet_partition(len(docs), n, settings.cfg.alpha, settings.seed)[pid]]
    else:  # a site with its own data file and no partitioning
        pid, n = int(node_config.get("site-id", 0)), int(node_config.get("num-sites", 1))
    return ClientShard(pid, n, make_windows(docs, settings.cfg.model))


def client_round(settings: Settings, shard: ClientShard, global_flat: torch.Tensor, round_idx: int,
                 delta: float) -> Tuple[torch.Tensor, Dict[str, float]]:
    """One client's training round: the update that leaves the node (noised under local DP) and its metrics."""
    cfg = settings.cfg
    mech = client_mechanism(settings.spec, settings.epsilon, cfg, len(shard.windows), delta)
    privacy = mech.report
    res = local_update(global_flat, shard.windows, cfg.model, epochs=cfg.local_epochs, lr=cfg.lr,
                       batch_size=cfg.batch_size, seed=client_seed(settings.seed, round_idx, shard.partition_id),
                       local_dp=mech.local_dp, dpsgd=mech.dpsgd, secret_randomness=settings.randomness == "deployment")
    metrics = {"partition-id": float(shard.partition_id), "num-samples": float(res["num_samples"]),
               "loss": float(res["loss"]), "norm": float(res["norm"])}
    for key in ("epsilon_total_rdp", "sigma", "noise_multiplier"):
        if key in privacy:
            metrics[key.replace("_", "-")] = float(privacy[key])
    return res["update"], metrics


# --- server side ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class NodeInfo:
    """What the server learns from a node before training: partition and number of windows."""

    node_id: int
    partition_id: int
    num_partitions: int
    num_windows: int


#: ``train_round(round_idx, [(node, partition id)], global weights, config) -> [(update, metrics)]``
TrainRound = Callable[[int, Sequence[NodeInfo], torch.Tensor, Dict[str, Any]], List[Tuple[torch.Tensor, Dict[str, float]]]]


def check_nodes(nodes: Sequence[NodeInfo], expected: int) -> Dict[int, NodeInfo]:
    """Partition id -> node; every partition 0..n-1 exactly once, and as many as ``expected`` (if > 0)."""
    by_pid = {n.partition_id: n for n in nodes}
    n = len(nodes)
    if expected and n != expected:
        raise RuntimeError(f"{n} SuperNodes answered, the run config expects num-clients={expected}")
    if sorted(by_pid) != list(range(n)) or any(x.num_partitions != n for x in nodes):
        raise RuntimeError("the SuperNodes' node configs must hold partition-id 0..n-1 and num-partitions=n; got "
                           + ", ".join(f"node {x.node_id}: {x.partition_id}/{x.num_partitions}" for x in nodes))
    return by_pid


def run_server(settings: Settings, nodes: Sequence[NodeInfo], train_round: TrainRound,
               log: Callable[[str], None] = print, wire: Any = None) -> Dict[str, Any]:
    """The server loop: select clients, exchange weights with ``train_round``, aggregate, evaluate, report.

    ``wire`` (a :class:`.wire.CountingGrid`): its byte count per round goes into the history."""
    t0 = time.perf_counter()
    by_pid = check_nodes(nodes, settings.num_clients)
    cfg = replace(settings.cfg, n_clients=len(by_pid))
    settings = replace(settings, cfg=cfg)
    sizes = [by_pid[k].num_windows for k in sorted(by_pid)]
    # δ = 1/|S| with |S| the smallest client's windows, as in the simulation
    delta = 1.0 / max(2, min(sizes))
    spec = settings.spec
    privacy: Dict[str, Any] = run_report(spec, settings.epsilon, cfg, sizes)
    privacy["epsilon_target"] = _eps(settings.epsilon)
    init_flat = get_flat(new_model(cfg.model, settings.seed))
    # DP-FTRL's tree noise: seeded as the simulation in a benchmark, from the OS CSPRNG in a deployment
    noise_seed = settings.seed * 7 + 3 if settings.randomness == "benchmark" else secrets.randbits(62)
    server = make_aggregator(spec, settings.epsilon, cfg, init_flat, torch.Generator().manual_seed(noise_seed))
    global_flat = init_flat.clone()
    history: List[Dict[str, Any]] = []
    client_eps: List[float] = []
    for r in range(cfg.rounds):
        chosen = [by_pid[k] for k in select_clients(cfg.n_clients, cfg.participation, r, settings.seed)]
        t_round, b_round = time.perf_counter(), (wire.total if wire is not None else 0)
        replies = train_round(r, chosen, global_flat, {"round": r, "delta": delta})
        by_reply = sorted(replies, key=lambda rep: rep[1]["partition-id"])
        got = [int(m["partition-id"]) for _, m in by_reply]
        if got != [c.partition_id for c in chosen]:
            raise RuntimeError(f"round {r}: asked partitions {[c.partition_id for c in chosen]}, got replies from {got}")
        global_flat = server.step(global_flat, [(u, m["num-samples"]) for u, m in by_reply])
        client_eps += [m["epsilon-total-rdp"] for _, m in by_reply if "epsilon-total-rdp" in m]
        history.append({"round": r, "partitions": got, "nodes": [c.node_id for c in chosen],
                        "num_samples": [int(m["num-samples"]) for _, m in by_reply],
                        "loss": [round(m["loss"], 5) for _, m in by_reply],
                        "update_norm": [round(m["norm"], 5) for _, m in by_reply],
                        "global_norm": round(float(global_flat.norm()), 5),
                        "seconds": round(time.perf_counter() - t_round, 3)})
        if wire is not None:
            history[-1]["bytes"] = wire.total - b_round
        log(f"round {r + 1}/{cfg.rounds}: partitions {got}, mean loss "
            f"{sum(m['loss'] for _, m in by_reply) / len(by_reply):.4f}")
    if spec.privacy == "dpsgd" and client_eps:
        privacy.update(epsilon_total_rdp=max(client_eps), rounds_accounted=cfg.rounds)
    if spec.local_dp and client_eps and max(client_eps) > privacy["epsilon_total_rdp"] + 1e-9:
        raise RuntimeError("a client accounted more privacy loss than the server's calibration")
    clients = {str(n.partition_id): {"node_id": n.node_id, "num_windows": n.num_windows} for n in nodes}
    return finish_run(settings, init_flat, global_flat, privacy, history, clients, t0, log)


def finish_run(settings: Settings, init_flat: torch.Tensor, global_flat: torch.Tensor, privacy: Dict[str, Any],
               history: List[Dict[str, Any]], clients: Dict[str, Any], t0: float,
               log: Callable[[str], None] = print) -> Dict[str, Any]:
    """The result of a run (plain or SecAgg+): the final model evaluated on dev, saved and reported."""
    cfg = settings.cfg
    model = new_model(cfg.model, settings.seed)
    set_flat(model, global_flat)
    result: Dict[str, Any] = {
        "method": settings.method, "model": cfg.model.kind, "epsilon": _eps(settings.epsilon), "seed": settings.seed,
        "randomness": settings.randomness, "rounds": cfg.rounds, "secagg": settings.secagg, "clients": clients,
        "history": history, "privacy": privacy, "config": {"fed": asdict(cfg), "threads": settings.threads},
        "initial_norm": round(float(init_flat.norm()), 6), "final_norm": round(float(global_flat.norm()), 6),
        "weight_change_norm": round(float((global_flat - init_flat).norm()), 6),
        "final_sha256": hashlib.sha256(global_flat.numpy().tobytes()).hexdigest(),
    }
    if settings.dev_path:
        dev = _docs(settings.dev_path, settings.max_dev_docs, "dev")
        ev = evaluate_psr(model, dev, cfg.threshold)
        result["dev"] = {"n_docs": len(dev), **{k: ev[k] for k in ("PSR", "token_precision", "token_recall",
                                                                     "ER_di", "ER_qi", "n_entities")}}
        log(f"dev: PSR={ev['PSR']:.4f} token_precision={ev['token_precision']:.4f} over {len(dev)} documents")
    result["train_seconds"] = round(time.perf_counter() - t0, 2)
    if settings.model_path:
        os.makedirs(os.path.dirname(os.path.abspath(settings.model_path)), exist_ok=True)
        save_model(model, settings.model_path, {"method": settings.method, "epsilon": settings.epsilon,
                                                "seed": settings.seed, "threshold": cfg.threshold,
                                                "privacy": privacy, "trained_with": "flower"})
        result["model_path"] = os.path.abspath(settings.model_path)
    if settings.result_path:
        write_result(settings.result_path, result)
    log(f"done: weight change {result['weight_change_norm']:.4f}, "
        f"epsilon_total_accounted={privacy.get('epsilon_total_rdp', 'inf')}")
    return result


def _eps(epsilon: float) -> "float | str":
    return epsilon if math.isfinite(epsilon) else "inf"


def write_result(path: str, result: Mapping[str, Any]) -> None:
    """Write the result JSON atomically (readers never see half a file)."""
    path = os.path.abspath(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=1, default=str)
    os.replace(tmp, path)
