"""Restoration of streamed chat completions (server-sent events), chunk by chunk.

Message contents are restored incrementally by :class:`~..desensitization.restore.StreamRestorer` (only a
possible surrogate, or a surrogate whose token has not ended, is held back; every character is emitted
once, and the concatenation equals the one-pass restoration).  Tool-call arguments are JSON whose
URL-typed values must not be restored, so each call's arguments are collected and restored as one JSON
value when its choice finishes.  A stream the upstream ends without ``[DONE]`` ends with an error event.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, AsyncIterator, Dict, List, Tuple

import httpx

from ..desensitization.restore import StreamRestorer
from .responses import error_body, parse_json

if TYPE_CHECKING:  # pragma: no cover
    from .engine import Prepared


def sse(obj: Any) -> bytes:
    return b"data: " + json.dumps(obj, ensure_ascii=False).encode("utf-8") + b"\n\n"


def withheld_comment(n: int) -> bytes:
    """An SSE comment (clients ignore it) saying how many surrogates were left in links on purpose."""
    return (f": privacy-gateway: {n} surrogate(s) inside links, link targets or HTML attributes were not "
            f"restored\n\n").encode("utf-8")


class ChunkRestorer:
    """Restores a chat-completion SSE stream chunk by chunk (contents, tool-call names and arguments)."""

    def __init__(self, prepared: "Prepared") -> None:
        self.prepared = prepared
        self.text: Dict[int, StreamRestorer] = {}
        self.args: Dict[Tuple[int, int], List[str]] = {}   # raw argument fragments per (choice, call)
        self.names: Dict[Tuple[int, int], str] = {}        # the tool name as the upstream wrote it
        self.last: Dict[str, Any] = {"id": "", "created": 0, "model": ""}
        self.withheld = 0

    def _text(self, i: int) -> StreamRestorer:
        if i not in self.text:
            self.text[i] = self.prepared.text_restorer()
        return self.text[i]

    def _flush_choice(self, i: int, delta: Dict[str, Any]) -> None:
        if i in self.text:
            r = self.text.pop(i)
            rest = r.flush()
            self.withheld += r.withheld
            if rest:
                delta["content"] = (delta.get("content") or "") + rest
        for (ci, k) in sorted(key for key in self.args if key[0] == i):
            raw = "".join(self.args.pop((ci, k)))
            restored, n = self.prepared.restore_arguments(self.names.get((ci, k), ""), raw)
            self.withheld += n
            calls = delta.setdefault("tool_calls", [])
            entry = next((c for c in calls if c.get("index") == k), None)
            if entry is None:
                entry = {"index": k, "function": {}}
                calls.append(entry)
            entry.setdefault("function", {})["arguments"] = restored

    def chunk(self, event: Dict[str, Any]) -> Dict[str, Any]:
        for key in self.last:
            if key in event:
                self.last[key] = event[key]
        for choice in event.get("choices") or []:
            i = int(choice.get("index", 0))
            delta = choice.get("delta") or {}
            if isinstance(delta.get("content"), str):
                delta["content"] = self._text(i).feed(delta["content"])
            for call in delta.get("tool_calls") or []:
                k = int(call.get("index", 0))
                fn = call.get("function") or {}
                if isinstance(fn.get("name"), str):
                    self.names[(i, k)] = self.names.get((i, k), "") + fn["name"]
                    fn["name"] = self.prepared.restore(fn["name"])
                self.args.setdefault((i, k), [])
                if isinstance(fn.get("arguments"), str):
                    self.args[(i, k)].append(fn["arguments"])
                    fn["arguments"] = ""  # sent, restored, when the choice finishes
            if choice.get("finish_reason") is not None:
                self._flush_choice(i, delta)
                choice["delta"] = delta
        return event

    def flush_all(self) -> List[Dict[str, Any]]:
        """Chunks carrying whatever is still held back (the stream ended without a finish_reason)."""
        out = []
        for i in sorted({i for i in self.text} | {i for i, _ in self.args}):
            delta: Dict[str, Any] = {}
            self._flush_choice(i, delta)
            if delta:
                out.append(dict(self.last, object="chat.completion.chunk",
                                choices=[{"index": i, "delta": delta, "finish_reason": None}]))
        return out


async def as_stream(data: Dict[str, Any], withheld: int = 0) -> AsyncIterator[bytes]:
    """A complete (restored) chat completion as server-sent events: one chunk per choice, then [DONE]."""
    for choice in data.get("choices") or []:
        msg = dict(choice.get("message") or {})
        calls = msg.get("tool_calls")
        if calls:
            msg["tool_calls"] = [dict(c, index=k) for k, c in enumerate(calls)]
        yield sse({"id": data.get("id", ""), "object": "chat.completion.chunk", "created": data.get("created", 0),
                   "model": data.get("model", ""),
                   "choices": [{"index": choice.get("index", 0), "delta": msg,
                                "finish_reason": choice.get("finish_reason") or "stop"}]})
    if withheld:
        yield withheld_comment(withheld)
    yield b"data: [DONE]\n\n"


async def restore_stream(resp: httpx.Response, prepared: "Prepared") -> AsyncIterator[bytes]:
    """Relay the upstream's server-sent events with every chunk restored; nothing is emitted twice.

    An upstream stream that ends without ``[DONE]`` (or breaks) ends with an OpenAI-style error event after
    whatever was held back, so a client never takes a truncated answer for a complete one."""
    restorer = ChunkRestorer(prepared)
    try:
        async for line in resp.aiter_lines():
            if not line.strip():
                continue
            if not line.startswith("data:"):
                yield line.encode("utf-8") + b"\n"  # comments, event names: relayed as they are
                continue
            payload = line[5:].strip()
            if payload == "[DONE]":
                for extra in restorer.flush_all():
                    yield sse(extra)
                if restorer.withheld:
                    yield withheld_comment(restorer.withheld)
                yield b"data: [DONE]\n\n"
                return
            event = parse_json(payload.encode("utf-8"))
            if not isinstance(event, dict):
                yield line.encode("utf-8") + b"\n\n"
                continue
            yield sse(restorer.chunk(event))
        reason = "the upstream stream ended without [DONE] (truncated answer)"
    except httpx.HTTPError as exc:
        reason = f"upstream stream interrupted: {type(exc).__name__}"
    finally:
        await resp.aclose()
    for extra in restorer.flush_all():
        yield sse(extra)
    yield sse(error_body(reason, "upstream_error", "stream_truncated"))
