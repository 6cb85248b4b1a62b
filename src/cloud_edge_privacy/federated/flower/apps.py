"""The Flower ``ServerApp`` and ``ClientApp`` (Message API): thin adapters over :mod:`.core`.

Components for ``[tool.flwr.app.components]``::

    serverapp = "cloud_edge_privacy.federated.flower.apps:server_app"
    clientapp = "cloud_edge_privacy.federated.flower.apps:client_app"

Messages: one ``query`` per node at the start (partition id, number of windows), then per round one ``train``
message per selected node carrying the global weights (``ArrayRecord`` "global", one flat float32 vector)
and ``ConfigRecord`` "config" (round, δ); the reply carries ``ArrayRecord`` "update" (what leaves the node,
noised under local DP) and ``MetricRecord`` "metrics".
"""
from __future__ import annotations

import time
from logging import INFO
from typing import Any, Dict, List, Sequence, Tuple

import numpy as np
import torch

from . import require_flwr

require_flwr()

from flwr.app import Array, ArrayRecord, ConfigRecord, Context, Message, MessageType, MetricRecord, RecordDict  # noqa: E402
from flwr.clientapp import ClientApp  # noqa: E402
from flwr.common.logger import log as flwr_log  # noqa: E402
from flwr.serverapp import Grid, ServerApp  # noqa: E402

from .core import NodeInfo, client_round, load_shard, run_server, settings_from_config  # noqa: E402
from .wire import CountingGrid  # noqa: E402


def _to_array(flat: torch.Tensor) -> ArrayRecord:
    return ArrayRecord({"flat": Array(np.ascontiguousarray(flat.detach().cpu().numpy(), dtype=np.float32))})


def _from_array(record: ArrayRecord) -> torch.Tensor:
    return torch.from_numpy(np.array(record["flat"].numpy(), dtype=np.float32))


def _log(text: str) -> None:
    flwr_log(INFO, "[cloud-edge-privacy] %s", text)


# --- ClientApp ------------------------------------------------------------------------------------

client_app = ClientApp()


@client_app.query()
def describe(msg: Message, context: Context) -> Message:
    """Tell the server this node's partition and how many training windows it holds."""
    settings = settings_from_config(context.run_config)
    torch.set_num_threads(settings.threads)
    shard = load_shard(settings, context.node_config)
    metrics = MetricRecord({"partition-id": shard.partition_id, "num-partitions": shard.num_partitions,
                            "num-windows": len(shard.windows)})
    return Message(RecordDict({"metrics": metrics}), reply_to=msg)


@client_app.train()
def train(msg: Message, context: Context) -> Message:
    """One local round: :func:`core.client_round` (= ``client.local_update``) from the received global weights."""
    settings = settings_from_config(context.run_config)
    torch.set_num_threads(settings.threads)
    shard = load_shard(settings, context.node_config)
    conf = msg.content.config_records["config"]
    update, metrics = client_round(settings, shard, _from_array(msg.content.array_records["global"]),
                                   int(conf["round"]), float(conf["delta"]))
    return Message(RecordDict({"update": _to_array(update), "metrics": MetricRecord(metrics)}), reply_to=msg)


# --- ServerApp ------------------------------------------------------------------------------------

server_app = ServerApp()


def _exchange(grid: "Grid | CountingGrid", messages: List[Message], timeout: float, what: str) -> List[Message]:
    replies = list(grid.send_and_receive(messages, timeout=timeout))
    errors = [f"node {r.metadata.src_node_id}: {r.error.reason}" for r in replies if r.has_error()]
    if errors:
        raise RuntimeError(f"{what}: client error(s): " + "; ".join(errors))
    if len(replies) != len(messages):
        raise RuntimeError(f"{what}: {len(replies)} of {len(messages)} nodes replied within {timeout:.0f} s")
    return replies


def _wait_for_nodes(grid: Grid, expected: int, seconds: float) -> List[int]:
    deadline = time.monotonic() + seconds
    nodes = sorted(grid.get_node_ids())
    while (len(nodes) < max(expected, 1)) and time.monotonic() < deadline:
        time.sleep(1.0)
        nodes = sorted(grid.get_node_ids())
    if expected and len(nodes) < expected:
        raise RuntimeError(f"only {len(nodes)} of num-clients={expected} SuperNodes connected within {seconds:.0f} s")
    return nodes


@server_app.main()
def main(grid: Grid, context: Context) -> None:
    """Discover the nodes, then :func:`core.run_server` with a Flower message exchange per round."""
    settings = settings_from_config(context.run_config)
    if settings.secagg:
        raise RuntimeError("secagg = true runs with the SecAgg+ apps (cloud_edge_privacy.federated.flower.secagg; "
                           "the example's flower_secagg app directory)")
    torch.set_num_threads(settings.threads)
    node_ids = _wait_for_nodes(grid, settings.num_clients, settings.node_wait_seconds)
    queries = [Message(RecordDict({"config": ConfigRecord({"ask": "partition"})}), dst_node_id=n,
                       message_type=MessageType.QUERY, group_id="discover") for n in node_ids]
    nodes = []
    for rep in _exchange(grid, queries, settings.round_timeout_seconds, "discover"):
        m = rep.content.metric_records["metrics"]
        nodes.append(NodeInfo(rep.metadata.src_node_id, int(m["partition-id"]), int(m["num-partitions"]),
                              int(m["num-windows"])))
    _log(f"{settings.method} eps={settings.epsilon} on {len(nodes)} SuperNodes: "
         + ", ".join(f"partition {n.partition_id} = node {n.node_id} ({n.num_windows} windows)"
                     for n in sorted(nodes, key=lambda x: x.partition_id)))

    def train_round(round_idx: int, chosen: Sequence[NodeInfo], global_flat: torch.Tensor,
                    config: Dict[str, Any]) -> List[Tuple[torch.Tensor, Dict[str, float]]]:
        msgs = [Message(RecordDict({"global": _to_array(global_flat), "config": ConfigRecord(config)}),
                        dst_node_id=n.node_id, message_type=MessageType.TRAIN, group_id=str(round_idx))
                for n in chosen]
        out = []
        for rep in _exchange(wire, msgs, settings.round_timeout_seconds, f"round {round_idx + 1}"):
            metrics = {k: float(v) for k, v in rep.content.metric_records["metrics"].items()}
            out.append((_from_array(rep.content.array_records["update"]), metrics))
        return out

    wire = CountingGrid(grid)
    run_server(settings, nodes, train_round, log=_log, wire=wire)
