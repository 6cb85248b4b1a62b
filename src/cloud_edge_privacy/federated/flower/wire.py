"""What crosses the wire between the ServerApp and the nodes: a Grid wrapper that counts message bytes.

The count is the protobuf size of each message's content (``RecordDict``), both ways, as Flower serialises it;
transport framing and TLS are not included. Used to put the cost of SecAgg+ beside plain FedAvg.
"""
from __future__ import annotations

from typing import Any, Iterable, List


def content_bytes(message: Any) -> int:
    """Serialised size of a message's content (0 for a message that carries an error)."""
    from flwr.common.serde import recorddict_to_proto

    if message.has_error():
        return 0
    return int(recorddict_to_proto(message.content).ByteSize())


class CountingGrid:
    """A ``Grid`` that counts the bytes it sends and receives in ``send_and_receive``; everything else is
    passed through to the wrapped grid."""

    def __init__(self, grid: Any) -> None:
        self._grid = grid
        self.sent = 0
        self.received = 0
        self.messages = 0

    def send_and_receive(self, messages: Iterable[Any], *args: Any, **kwargs: Any) -> List[Any]:
        messages = list(messages)
        self.sent += sum(content_bytes(m) for m in messages)
        replies = list(self._grid.send_and_receive(messages, *args, **kwargs))
        self.received += sum(content_bytes(r) for r in replies)
        self.messages += len(messages) + len(replies)
        return replies

    @property
    def total(self) -> int:
        return self.sent + self.received

    def __getattr__(self, name: str) -> Any:
        return getattr(self._grid, name)
