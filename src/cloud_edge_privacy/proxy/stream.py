"""Restoration of streamed chat completions (server-sent events), chunk by chunk.

Message contents are restored incrementally by :class:`~..desensitization.restore.StreamRestorer` (text
without a possible surrogate is relayed at once; from a surrogate on, text is held until its Markdown block
has ended, so a link target or code span that closes later cannot receive a real value; every character is
emitted once, and the concatenation equals the one-pass restoration).  Tool-call arguments are collected and
restored as one JSON value when their choice finishes (only declared plain-text parameters of declared
tools, see :func:`..engine.restore_arguments`).  A chunk that is not a chat-completion chunk, or a stream
the upstream ends without ``[DONE]``, ends the stream with an OpenAI-style error event.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, AsyncIterator, Dict, List, Tuple

import anyio.to_thread
import httpx

from ..desensitization.restore import StreamRestorer
from .engine import MalformedUpstream
from .responses import error_body, parse_upstream_json

if TYPE_CHECKING:  # pragma: no cover
    from .engine import Prepared

MAX_CHOICES = 128


def sse(obj: Any) -> bytes:
    return b"data: " + json.dumps(obj, ensure_ascii=False).encode("utf-8") + b"\n\n"


def withheld_comment(n: int) -> bytes:
    """An SSE comment (clients ignore it) saying how many surrogates were not restored on purpose."""
    return (f": privacy-gateway: {n} surrogate(s) were not restored (links, code, HTML, URL-like tokens, "
            f"undeclared tool arguments)\n\n").encode("utf-8")


def withheld_chunk(last: Dict[str, Any], n: int) -> Dict[str, Any]:
    """A chunk without choices (as the usage chunk) that carries the withheld count as a field."""
    return dict(last, object="chat.completion.chunk", choices=[], privacy_withheld=n)


def _index(v: Any, where: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < MAX_CHOICES:
        raise MalformedUpstream(f"{where} is not an index between 0 and {MAX_CHOICES - 1}")
    return v


def check_chunk(event: Any) -> None:
    """Raise :class:`MalformedUpstream` (naming the field) for anything but a chat-completion chunk."""
    if not isinstance(event, dict):
        raise MalformedUpstream("a chunk is not a JSON object")
    choices = event.get("choices", [])
    if not isinstance(choices, list):
        raise MalformedUpstream("chunk 'choices' is not a list")
    for n, choice in enumerate(choices):
        if not isinstance(choice, dict):
            raise MalformedUpstream(f"chunk choices[{n}] is not an object")
        _index(choice.get("index", 0), f"chunk choices[{n}].index")
        delta = choice.get("delta", {})
        if delta is None:
            continue
        if not isinstance(delta, dict):
            raise MalformedUpstream(f"chunk choices[{n}].delta is not an object")
        for key in ("content", "reasoning_content", "refusal", "role"):
            if delta.get(key) is not None and not isinstance(delta[key], str):
                raise MalformedUpstream(f"chunk choices[{n}].delta.{key} is not a string")
        calls = delta.get("tool_calls")
        if calls is not None and not isinstance(calls, list):
            raise MalformedUpstream(f"chunk choices[{n}].delta.tool_calls is not a list")
        for k, call in enumerate(calls or []):
            if not isinstance(call, dict):
                raise MalformedUpstream(f"chunk choices[{n}].delta.tool_calls[{k}] is not an object")
            _index(call.get("index", 0), f"chunk choices[{n}].delta.tool_calls[{k}].index")
            fn = call.get("function", {})
            if fn is not None and not isinstance(fn, dict):
                raise MalformedUpstream(f"chunk choices[{n}].delta.tool_calls[{k}].function is not an object")
            for key in ("name", "arguments"):
                if (fn or {}).get(key) is not None and not isinstance(fn[key], str):
                    raise MalformedUpstream(f"chunk choices[{n}].delta.tool_calls[{k}].function.{key} is not a string")


class ChunkRestorer:
    """Restores a chat-completion SSE stream chunk by chunk (contents, tool-call names and arguments)."""

    def __init__(self, prepared: "Prepared") -> None:
        self.prepared = prepared
        self.text: Dict[int, StreamRestorer] = {}
        self.args: Dict[Tuple[int, int], List[str]] = {}   # raw argument fragments per (choice, call)
        self.names: Dict[Tuple[int, int], str] = {}        # the tool name as the upstream wrote it
        self.last: Dict[str, Any] = {"id": "", "created": 0, "model": ""}
        self.json: Dict[int, List[str]] = {}               # JSON answers: held whole, restored at the end
        self.withheld = 0

    def _text(self, i: int) -> StreamRestorer:
        if i not in self.text:
            self.text[i] = self.prepared.text_restorer()
        return self.text[i]

    def _flush_choice(self, i: int, delta: Dict[str, Any]) -> None:
        if i in self.json:
            restored, n = self.prepared.restore_content("".join(self.json.pop(i)))
            self.withheld += n
            delta["content"] = (delta.get("content") or "") + restored
        if i in self.text:
            r = self.text.pop(i)
            rest = r.flush()
            self.withheld += r.withheld
            if rest:
                delta["content"] = (delta.get("content") or "") + rest
        for (ci, k) in sorted(key for key in self.args if key[0] == i):
            raw = "".join(self.args.pop((ci, k)))
            restored, n = self.prepared.restore_call(self.names.get((ci, k), ""), raw)
            self.withheld += n
            calls = delta.setdefault("tool_calls", [])
            entry = next((c for c in calls if c.get("index") == k), None)
            if entry is None:
                entry = {"index": k, "function": {}}
                calls.append(entry)
            entry.setdefault("function", {})["arguments"] = restored

    def chunk(self, event: Dict[str, Any]) -> Dict[str, Any]:
        check_chunk(event)
        for key in self.last:
            if key in event:
                self.last[key] = event[key]
        for choice in event.get("choices") or []:
            i = int(choice.get("index", 0))
            delta = choice.get("delta") or {}
            if isinstance(delta.get("content"), str):
                if self.prepared.json_content:
                    self.json.setdefault(i, []).append(delta["content"])
                    delta["content"] = ""  # a JSON answer is read whole (as tool-call arguments are)
                else:
                    delta["content"] = self._text(i).feed(delta["content"])
            for call in delta.get("tool_calls") or []:
                k = int(call.get("index", 0))
                fn = call.get("function") or {}
                if isinstance(fn.get("name"), str):
                    self.names[(i, k)] = self.names.get((i, k), "") + fn["name"]
                    fn["name"] = self.prepared.tool_name(fn["name"])
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
        for i in sorted({i for i in self.text} | {i for i, _ in self.args} | set(self.json)):
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
        yield sse(withheld_chunk({"id": data.get("id", ""), "created": data.get("created", 0),
                                  "model": data.get("model", "")}, withheld))
    yield b"data: [DONE]\n\n"


async def restore_stream(resp: httpx.Response, prepared: "Prepared") -> AsyncIterator[bytes]:
    """Relay the upstream's server-sent events with every chunk restored; nothing is emitted twice.

    An upstream stream that ends without ``[DONE]`` (or breaks, or sends a chunk that is not a chat-completion
    chunk) ends with an OpenAI-style error event after whatever was held back, so a client never takes a
    truncated answer for a complete one."""
    restorer = ChunkRestorer(prepared)
    code = "stream_truncated"
    try:
        async for line in resp.aiter_lines():
            if not line.strip():
                continue
            if not line.startswith("data:"):
                if line.startswith(":"):
                    continue  # upstream comments are not relayed (they are not restored)
                yield line.encode("utf-8") + b"\n"  # event names, ids: relayed as they are
                continue
            payload = line[5:].strip()
            if payload == "[DONE]":
                for extra in restorer.flush_all():
                    yield sse(extra)
                if restorer.withheld:
                    yield withheld_comment(restorer.withheld)
                    yield sse(withheld_chunk(restorer.last, restorer.withheld))
                yield b"data: [DONE]\n\n"
                return
            event = parse_upstream_json(payload.encode("utf-8"))
            if event is None:
                raise MalformedUpstream("a chunk is not valid JSON")
            yield sse(await anyio.to_thread.run_sync(restorer.chunk, event))
        reason = "the upstream stream ended without [DONE] (truncated answer)"
    except MalformedUpstream as exc:
        reason, code = f"the upstream sent a malformed stream: {exc}", "malformed_upstream_chunk"
    except httpx.HTTPError as exc:
        reason = f"upstream stream interrupted: {type(exc).__name__}"
    finally:
        await resp.aclose()
    for extra in restorer.flush_all():
        yield sse(extra)
    yield sse(error_body(reason, "upstream_error", code))
