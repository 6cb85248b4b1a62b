"""Streams between APIs: an Anthropic upstream's events as chat-completion chunks (so the one stream restorer,
:class:`~.stream.ChunkRestorer`, reads every upstream the same way), and the restored chat-completion stream
as the typed events of the client's API (Responses: ``response.*`` events; Anthropic Messages:
``message_start`` ... ``message_stop``).

Restoration happens before translation: text deltas are relayed as the restorer releases them, tool calls
are emitted whole when their choice finishes (their arguments are restored as one JSON value), and an error
event of the client's API ends a stream the upstream broke or truncated.
"""
from __future__ import annotations

import json
import time
from typing import Any, AsyncIterator, Dict, List, Optional

from .apis import FINISH_TO_STOP, STOP_TO_FINISH, api_error, MESSAGES
from .engine import MalformedUpstream


def typed(event: Dict[str, Any]) -> bytes:
    """One server-sent event with its type as the event name (as both APIs send them)."""
    return (f"event: {event['type']}\ndata: " + json.dumps(event, ensure_ascii=False) + "\n\n").encode("utf-8")


def _chunk(delta: Dict[str, Any], finish: Optional[str] = None) -> str:
    return "data: " + json.dumps({"id": "", "object": "chat.completion.chunk", "created": 0, "model": "",
                                  "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})


async def anthropic_lines(lines: AsyncIterator[str]) -> AsyncIterator[str]:
    """An Anthropic Messages event stream as chat-completion chunk lines (``data: ...``, then ``[DONE]`` at
    ``message_stop``); an ``error`` event or a block that is not text or tool_use raises
    :class:`MalformedUpstream` (the stream then ends with an error event)."""
    calls: Dict[int, int] = {}   # content block index -> tool-call index
    async for line in lines:
        if not line.startswith("data:"):
            continue
        try:
            ev = json.loads(line[5:].strip())
        except json.JSONDecodeError:
            raise MalformedUpstream("an event is not valid JSON") from None
        kind = ev.get("type") if isinstance(ev, dict) else None
        if kind == "message_start":
            yield _chunk({"role": "assistant"})
        elif kind == "content_block_start":
            block = ev.get("content_block") or {}
            if block.get("type") == "tool_use":
                calls[ev.get("index", 0)] = k = len(calls)
                yield _chunk({"tool_calls": [{"index": k, "id": str(block.get("id", "")), "type": "function",
                                              "function": {"name": block.get("name", ""), "arguments": ""}}]})
            elif block.get("type") != "text":
                raise MalformedUpstream(f"content block type {str(block.get('type'))[:40]!r} is not text or tool_use")
            elif block.get("text"):
                yield _chunk({"content": block["text"]})
        elif kind == "content_block_delta":
            delta = ev.get("delta") or {}
            if delta.get("type") == "text_delta":
                yield _chunk({"content": delta.get("text", "")})
            elif delta.get("type") == "input_json_delta":
                k = calls.get(ev.get("index", 0))
                if k is None:
                    raise MalformedUpstream("input_json_delta for a block that is not a tool_use")
                yield _chunk({"tool_calls": [{"index": k, "function": {"arguments": delta.get("partial_json", "")}}]})
        elif kind == "message_delta":
            stop = (ev.get("delta") or {}).get("stop_reason")
            if stop is not None:
                yield _chunk({}, STOP_TO_FINISH.get(str(stop), "stop"))
        elif kind == "message_stop":
            yield "data: [DONE]"
            return
        elif kind == "error":
            err = ev.get("error") or {}
            raise MalformedUpstream(f"the upstream sent an error event ({str(err.get('type', ''))[:40]})")


def _parse(frame: bytes) -> Any:
    """The JSON of one ``data:`` frame of the restored chat stream (None for comments and non-data lines)."""
    text = frame.decode("utf-8")
    if not text.startswith("data: "):
        return None
    payload = text[6:].strip()
    return "[DONE]" if payload == "[DONE]" else json.loads(payload)


class _Collector:
    """What the restored chat stream said so far: text deltas, tool calls, finish reason, usage, withheld."""

    def __init__(self) -> None:
        self.calls: Dict[int, Dict[str, Any]] = {}
        self.finish: Optional[str] = None
        self.usage: Dict[str, Any] = {}
        self.withheld = 0
        self.model = ""

    def take(self, chunk: Dict[str, Any]) -> List[str]:
        """Record a chunk; returns its text deltas (first choice)."""
        self.model = chunk.get("model") or self.model
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        if isinstance(chunk.get("privacy_withheld"), int):
            self.withheld = chunk["privacy_withheld"]
        texts = []
        for choice in chunk.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            if delta.get("content"):
                texts.append(delta["content"])
            for call in delta.get("tool_calls") or []:
                c = self.calls.setdefault(call.get("index", 0), {"id": "", "name": "", "arguments": ""})
                fn = call.get("function") or {}
                c["id"] = call.get("id") or c["id"]
                c["name"] += fn.get("name") or ""
                c["arguments"] += fn.get("arguments") or ""
            if choice.get("finish_reason") is not None:
                self.finish = choice["finish_reason"]
        return texts


async def responses_events(frames: AsyncIterator[bytes], model: str) -> AsyncIterator[bytes]:
    """The restored chat stream as Responses API events."""
    rid = f"resp_{int(time.time() * 1000)}"
    seq = 0
    col = _Collector()
    text: List[str] = []
    msg_open = False

    def ev(kind: str, **fields: Any) -> bytes:
        nonlocal seq
        seq += 1
        return typed(dict(type=kind, sequence_number=seq, **fields))

    def response(status: str, output: List[Dict[str, Any]]) -> Dict[str, Any]:
        u = col.usage
        return {"id": rid, "object": "response", "created_at": int(time.time()), "model": col.model or model,
                "status": status, "output": output, "parallel_tool_calls": True, "tool_choice": "auto",
                "tools": [], "incomplete_details": {"reason": "max_output_tokens"} if col.finish == "length" else None,
                "usage": {"input_tokens": u.get("prompt_tokens", 0), "output_tokens": u.get("completion_tokens", 0),
                          "total_tokens": u.get("total_tokens", 0), "input_tokens_details": {"cached_tokens": 0},
                          "output_tokens_details": {"reasoning_tokens": 0}},
                "privacy_withheld": col.withheld}

    msg_id = f"msg_{rid}"
    yield ev("response.created", response=response("in_progress", []))
    yield ev("response.in_progress", response=response("in_progress", []))
    async for frame in frames:
        data = _parse(frame)
        if data is None:
            if frame.startswith(b":"):
                yield frame
            continue
        if data == "[DONE]":
            break
        if "error" in data:
            err = data["error"]
            yield ev("error", code=err.get("code"), message=err.get("message"), param=None, error=err)
            return
        for delta in col.take(data):
            if not msg_open:
                msg_open = True
                yield ev("response.output_item.added", output_index=0, item={
                    "type": "message", "id": msg_id, "role": "assistant", "status": "in_progress", "content": []})
                yield ev("response.content_part.added", item_id=msg_id, output_index=0, content_index=0,
                         part={"type": "output_text", "text": "", "annotations": []})
            text.append(delta)
            yield ev("response.output_text.delta", item_id=msg_id, output_index=0, content_index=0, delta=delta,
                     logprobs=[])
    output: List[Dict[str, Any]] = []
    if msg_open:
        full = "".join(text)
        part = {"type": "output_text", "text": full, "annotations": []}
        item = {"type": "message", "id": msg_id, "role": "assistant", "status": "completed", "content": [part]}
        yield ev("response.output_text.done", item_id=msg_id, output_index=0, content_index=0, text=full, logprobs=[])
        yield ev("response.content_part.done", item_id=msg_id, output_index=0, content_index=0, part=part)
        yield ev("response.output_item.done", output_index=0, item=item)
        output.append(item)
    for k in sorted(col.calls):
        c = col.calls[k]
        i = len(output)
        item = {"type": "function_call", "id": f"fc_{rid}_{k}", "call_id": c["id"], "name": c["name"],
                "arguments": "", "status": "in_progress"}
        yield ev("response.output_item.added", output_index=i, item=item)
        yield ev("response.function_call_arguments.delta", item_id=item["id"], output_index=i, delta=c["arguments"])
        yield ev("response.function_call_arguments.done", item_id=item["id"], output_index=i, arguments=c["arguments"])
        item = dict(item, arguments=c["arguments"], status="completed")
        yield ev("response.output_item.done", output_index=i, item=item)
        output.append(item)
    final = response("incomplete" if col.finish == "length" else "completed", output)
    yield ev("response.incomplete" if col.finish == "length" else "response.completed", response=final)


async def messages_events(frames: AsyncIterator[bytes], model: str) -> AsyncIterator[bytes]:
    """The restored chat stream as Anthropic Messages events."""
    col = _Collector()
    block = -1          # index of the open text block (-1: none)
    n_blocks = 0
    mid = f"msg_{int(time.time() * 1000)}"
    yield typed({"type": "message_start", "message": {
        "id": mid, "type": "message", "role": "assistant", "model": model, "content": [], "stop_reason": None,
        "stop_sequence": None, "usage": {"input_tokens": 0, "output_tokens": 0}}})
    async for frame in frames:
        data = _parse(frame)
        if data is None:
            if frame.startswith(b":"):
                yield frame
            continue
        if data == "[DONE]":
            break
        if "error" in data:
            err = data["error"]
            body = api_error(MESSAGES, 502, str(err.get("message", "upstream error")), "upstream_error",
                             err.get("code"))
            yield typed(body)
            return
        for delta in col.take(data):
            if block < 0:
                block, n_blocks = n_blocks, n_blocks + 1
                yield typed({"type": "content_block_start", "index": block,
                             "content_block": {"type": "text", "text": ""}})
            yield typed({"type": "content_block_delta", "index": block,
                         "delta": {"type": "text_delta", "text": delta}})
    if block >= 0:
        yield typed({"type": "content_block_stop", "index": block})
    for k in sorted(col.calls):
        c = col.calls[k]
        i, n_blocks = n_blocks, n_blocks + 1
        yield typed({"type": "content_block_start", "index": i,
                     "content_block": {"type": "tool_use", "id": c["id"], "name": c["name"], "input": {}}})
        yield typed({"type": "content_block_delta", "index": i,
                     "delta": {"type": "input_json_delta", "partial_json": c["arguments"]}})
        yield typed({"type": "content_block_stop", "index": i})
    yield typed({"type": "message_delta", "delta": {"stop_reason": FINISH_TO_STOP.get(str(col.finish), "end_turn"),
                                                     "stop_sequence": None},
                 "usage": {"output_tokens": col.usage.get("completion_tokens", 0)},
                 "privacy_withheld": col.withheld})
    yield typed({"type": "message_stop"})
