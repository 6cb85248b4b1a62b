"""FedAvg / DP-FedAvg with Flower's secure aggregation SecAgg+ (``secaggplus_mod`` + ``SecAggPlusWorkflow``).

Components for ``[tool.flwr.app.components]`` (the app directory ``flower_secagg/`` of the example)::

    serverapp = "cloud_edge_privacy.federated.flower.secagg:server_app"
    clientapp = "cloud_edge_privacy.federated.flower.secagg:client_app"

SecAgg+ works on Flower's strategy-based messages, so these apps use the legacy ``NumPyClient`` / ``Strategy``
shapes around the same library functions: a node trains with :func:`.core.client_round` (DP-SGD inside when the
method says so) and hands its update to ``secaggplus_mod``, which clips each value to ±``secagg-clipping-range``,
quantises it to ``secagg-quantization-range`` levels, multiplies it by its weight (its number of windows) and
masks it with pairwise and private masks; the ServerApp only ever unmasks the *sum* over the round's nodes,
divides by the sum of weights and applies it as FedAvg does (server lr ``server-lr-fedavg``).

What it protects against: a server (or anyone reading the ServerApp's traffic) seeing a single node's update
(honest-but-curious server; up to ``reconstruction-threshold - 1`` colluding nodes learn nothing either). What it
does not: the aggregate and the final model are in the clear (use DP-SGD, i.e. ``dp_fedavg``, for that); a
malicious server can drop nodes to shrink the sum, and it still learns each node's weight (number of windows)
and which nodes take part; the nodes' inputs are not checked (poisoning); with few nodes the sum of the others
plus the aggregate pins one node's update down. Rounds here take every node (participation 1.0).
"""
from __future__ import annotations

import math
import time
from logging import INFO
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import torch

from . import require_flwr

require_flwr()

from flwr.client import ClientApp, NumPyClient  # noqa: E402
from flwr.client.mod import secaggplus_mod  # noqa: E402
from flwr.common import Context, FitIns, Parameters, ndarrays_to_parameters, parameters_to_ndarrays  # noqa: E402
from flwr.common.logger import log as flwr_log  # noqa: E402
from flwr.server import Grid, LegacyContext, ServerApp, ServerConfig  # noqa: E402
from flwr.server.strategy import FedAvg  # noqa: E402
from flwr.server.workflow import DefaultWorkflow, SecAggPlusWorkflow  # noqa: E402

from ..model import get_flat, new_model  # noqa: E402
from ..privacy import run_report  # noqa: E402
from .core import Settings, client_round, finish_run, load_shard, settings_from_config  # noqa: E402
from .wire import CountingGrid  # noqa: E402


def _log(text: str) -> None:
    flwr_log(INFO, "[cloud-edge-privacy secagg] %s", text)


# --- ClientApp ------------------------------------------------------------------------------------

class _DetectorClient(NumPyClient):  # type: ignore[misc]
    def __init__(self, settings: Settings, node_config: Any) -> None:
        self.settings = settings
        self.shard = load_shard(settings, node_config)

    def fit(self, parameters: List[np.ndarray], config: Dict[str, Any]) -> Tuple[List[np.ndarray], int, Dict[str, Any]]:
        """One local round; the update goes to ``secaggplus_mod`` (quantised, weighted, masked), not in the clear."""
        global_flat = torch.from_numpy(np.array(parameters[0], dtype=np.float32))
        update, metrics = client_round(self.settings, self.shard, global_flat, int(config["round"]), 0.0)
        eps = {"epsilon-total-rdp": metrics["epsilon-total-rdp"]} if "epsilon-total-rdp" in metrics else {}
        return [update.numpy().astype(np.float32)], len(self.shard.windows), eps

    def evaluate(self, parameters: List[np.ndarray], config: Dict[str, Any]) -> Tuple[float, int, Dict[str, Any]]:
        return 0.0, 0, {}


def _client_fn(context: Context) -> Any:
    settings = settings_from_config(context.run_config)
    torch.set_num_threads(settings.threads)
    return _DetectorClient(settings, context.node_config).to_client()


client_app = ClientApp(client_fn=_client_fn, mods=[secaggplus_mod])


# --- ServerApp ------------------------------------------------------------------------------------

class _SecAggFedAvg(FedAvg):  # type: ignore[misc]
    """FedAvg over the securely aggregated mean update: Θ += η · (Σ w_k Δ_k / Σ w_k)."""

    def __init__(self, settings: Settings, init_flat: torch.Tensor, wire: CountingGrid) -> None:
        n = settings.num_clients
        super().__init__(fraction_fit=1.0, fraction_evaluate=0.0, min_fit_clients=n, min_available_clients=n,
                         initial_parameters=ndarrays_to_parameters([init_flat.numpy()]))
        self.settings, self.wire = settings, wire
        self.global_flat = init_flat.clone()
        self.history: List[Dict[str, Any]] = []
        self.client_eps: List[float] = []
        self._round_start: Tuple[float, int] = (0.0, 0)

    def configure_fit(self, server_round: int, parameters: Parameters, client_manager: Any) -> List[Tuple[Any, FitIns]]:
        self._round_start = (time.perf_counter(), self.wire.total)
        pairs = super().configure_fit(server_round, parameters, client_manager)
        return [(c, FitIns(ins.parameters, {"round": server_round - 1})) for c, ins in pairs]

    def aggregate_fit(self, server_round: int, results: List[Tuple[Any, Any]],
                      failures: List[Any]) -> Tuple[Optional[Parameters], Dict[str, Any]]:
        if failures or len(results) != self.settings.num_clients:
            raise RuntimeError(f"SecAgg+ round {server_round}: {len(results)} results, {len(failures)} failures "
                               f"(expected {self.settings.num_clients})")
        # SecAgg+ hands every result the same unmasked aggregate: the weighted mean of the updates
        mean_update = torch.from_numpy(np.array(parameters_to_ndarrays(results[0][1].parameters)[0], dtype=np.float32))
        self.global_flat = self.global_flat + self.settings.cfg.server_lr_fedavg * mean_update
        self.client_eps += [float(r.metrics["epsilon-total-rdp"]) for _, r in results if "epsilon-total-rdp" in r.metrics]
        t0, b0 = self._round_start
        self.history.append({"round": server_round - 1, "nodes": sorted(int(c.node_id) for c, _ in results),
                             "num_samples": sorted(int(r.num_examples) for _, r in results),
                             "seconds": round(time.perf_counter() - t0, 3), "bytes": self.wire.total - b0,
                             "global_norm": round(float(self.global_flat.norm()), 5)})
        _log(f"round {server_round}: securely aggregated {len(results)} updates "
             f"({self.history[-1]['bytes']} bytes, {self.history[-1]['seconds']} s)")
        return ndarrays_to_parameters([self.global_flat.numpy()]), {}


server_app = ServerApp()


@server_app.main()
def main(grid: Grid, context: Context) -> None:
    """FedAvg rounds whose aggregation step is the SecAgg+ workflow; then :func:`.core.finish_run`."""
    settings = settings_from_config(context.run_config)
    if not settings.secagg:
        raise RuntimeError("this ServerApp runs SecAgg+ only: set secagg = true (the flower_secagg app directory)")
    if settings.num_clients < 3:
        raise RuntimeError("SecAgg+ needs num-clients >= 3 (secret shares among at least three nodes)")
    torch.set_num_threads(settings.threads)
    t0 = time.perf_counter()
    cfg = settings.cfg
    init_flat = get_flat(new_model(cfg.model, settings.seed))
    wire = CountingGrid(grid)
    strategy = _SecAggFedAvg(settings, init_flat, wire)
    legacy = LegacyContext(context=context, config=ServerConfig(num_rounds=cfg.rounds), strategy=strategy)
    workflow = DefaultWorkflow(fit_workflow=SecAggPlusWorkflow(
        num_shares=settings.secagg_num_shares, reconstruction_threshold=settings.secagg_reconstruction_threshold,
        clipping_range=settings.secagg_clipping_range, quantization_range=settings.secagg_quantization_range,
        timeout=settings.round_timeout_seconds))
    workflow(wire, legacy)
    if len(strategy.history) != cfg.rounds:
        raise RuntimeError(f"SecAgg+ finished {len(strategy.history)} of {cfg.rounds} rounds")
    # the nodes' sizes are SecAgg+'s weights (the server learns them); DP-SGD is accounted per node
    privacy = run_report(settings.spec, settings.epsilon, cfg, strategy.history[0]["num_samples"])
    if strategy.client_eps:
        privacy.update(epsilon_total_rdp=max(strategy.client_eps))
    privacy["epsilon_target"] = settings.epsilon if math.isfinite(settings.epsilon) else "inf"
    privacy["secure_aggregation"] = {"protocol": "SecAgg+ (Flower secaggplus_mod + SecAggPlusWorkflow)",
                                     "num_shares": settings.secagg_num_shares,
                                     "reconstruction_threshold": settings.secagg_reconstruction_threshold,
                                     "clipping_range": settings.secagg_clipping_range,
                                     "quantization_range": settings.secagg_quantization_range}
    finish_run(settings, init_flat, strategy.global_flat, privacy, strategy.history,
               {"nodes": settings.num_clients, "wire_bytes_total": wire.total, "messages": wire.messages}, t0, log=_log)
