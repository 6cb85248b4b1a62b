"""The OpenAI-compatible FastAPI app: ``/v1/chat/completions`` (plain and streamed), ``/v1/models``, ``/healthz``.

Per request: size limit and client key -> protect every message and guard the outgoing body in a worker
thread (the edge pipeline) -> audit line before each upstream attempt -> upstream -> restore the answer
(contents, streamed chunks, tool-call arguments).  Any privacy failure answers with an OpenAI-style error
and sends nothing upstream; upstream errors come back with their own status.
"""
from __future__ import annotations

import asyncio
import hmac
import json
import time
import uuid
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, AsyncIterator, Dict, List, Optional, Tuple

import anyio.to_thread
import httpx
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from ..audit import AuditLog, body_sha256
from ..errors import PrivacyGatewayError
from ..pipeline import EgressBlocked, safe_reason
from ..randomness import Randomness
from .engine import Prepared, PrivacyEngine, restore_completion
from .settings import ProxySettings, Secrets, is_loopback
from .stream import StreamRestorer
from .upstream import Upstream, UpstreamUnavailable, error_body, parse_json

NO_RETRY = {"x-should-retry": "false"}  # the openai client honours it: a blocked request stays blocked


class BodyTooLarge(Exception):
    pass


def _error(status: int, message: str, err_type: str, code: Optional[str] = None,
           request_id: str = "", retry: bool = False) -> JSONResponse:
    headers = {} if retry else dict(NO_RETRY)
    if request_id:
        headers["x-request-id"] = request_id
    return JSONResponse(error_body(message, err_type, code), status_code=status, headers=headers)


async def _read_limited(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge()
    buf = bytearray()
    async for chunk in request.stream():
        buf += chunk
        if len(buf) > limit:
            raise BodyTooLarge()
    return bytes(buf)


def _validate(body: Any, max_messages: int) -> Optional[str]:
    """What is wrong with a chat request body (None: fine)."""
    if not isinstance(body, dict):
        return "the request body must be a JSON object"
    msgs = body.get("messages")
    if not isinstance(msgs, list) or not msgs:
        return "'messages' must be a non-empty list"
    if len(msgs) > max_messages:
        return f"too many messages ({len(msgs)} > {max_messages})"
    for i, m in enumerate(msgs):
        if not isinstance(m, dict) or not isinstance(m.get("role"), str):
            return f"messages[{i}] must be an object with a 'role'"
        c = m.get("content")
        if c is not None and not isinstance(c, (str, list)):
            return f"messages[{i}].content must be a string, a list of parts or null"
        if isinstance(c, list):
            for part in c:
                if not isinstance(part, dict) or part.get("type", "text") != "text":
                    # images, audio, files cannot be scanned: refusing them is failing closed
                    return f"messages[{i}] has a content part of a type the privacy gateway cannot check"
    return None


@dataclass
class ProxyState:
    """Everything the handlers share; immutable after start-up except through thread-safe objects."""

    settings: ProxySettings
    secrets: Secrets
    engine: PrivacyEngine
    audit: AuditLog
    upstream: Optional[Upstream] = None


def create_app(settings: ProxySettings, secrets: Secrets, randomness: Optional[Randomness] = None,
               transport: Optional[httpx.AsyncBaseTransport] = None, warm_up: bool = True,
               engine: Optional[PrivacyEngine] = None) -> FastAPI:
    """Build the app; loads the detectors (and runs one warm-up request through the pipeline) now.

    ``engine``: reuse an already built privacy engine (its settings, audit log and key win); the app then
    leaves the engine's worker threads running when it shuts down.
    """
    if not is_loopback(settings.host) and not secrets.client_key:
        from ..errors import ConfigError

        raise ConfigError(f"bound to {settings.host} without a client key (${settings.client_key_env})")
    owns_engine = engine is None
    if engine is None:
        rand = randomness or Randomness.deployment(require_key=True)
        audit = AuditLog(settings.audit_dir / "proxy_audit.jsonl", record_content=False,
                         max_bytes=settings.audit_max_bytes)
        engine = PrivacyEngine(settings, audit, rand)
        if warm_up:
            engine.warm_up()
    rand, audit = engine.randomness, engine.audit
    state = ProxyState(settings, secrets, engine, audit)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        state.upstream = Upstream(settings.upstream, secrets.upstream_key, settings.timeout_s,
                                  settings.connect_timeout_s, settings.max_retries, transport)
        try:
            yield
        finally:
            await state.upstream.aclose()
            if owns_engine:
                engine.executor.shutdown(wait=False, cancel_futures=True)

    app = FastAPI(title="cloud-edge-privacy proxy", lifespan=lifespan, docs_url=None, redoc_url=None,
                  openapi_url=None)
    app.state.proxy = state

    def authorized(request: Request) -> bool:
        if not secrets.client_key:
            return True
        given = request.headers.get("authorization", "")
        token = given[7:] if given[:7].lower() == "bearer " else ""
        return hmac.compare_digest(token.encode(), secrets.client_key.encode())

    async def audit_write(entry: Dict[str, Any]) -> None:
        await anyio.to_thread.run_sync(audit.write, entry)

    @app.get("/healthz")
    async def healthz() -> Dict[str, Any]:
        return {"status": "ok", "method": settings.method, "detector": settings.detector,
                "guard_detector": settings.guard_detector, "randomness": rand.label,
                "workers": settings.workers}

    @app.get("/v1/models")
    async def models(request: Request) -> Response:
        if not authorized(request):
            return _error(401, "invalid or missing client key", "invalid_request_error", "invalid_api_key")
        assert state.upstream is not None

        async def nothing(_: int) -> None:
            return None

        try:
            resp = await state.upstream.send("GET", "/models", None, False, nothing)
        except UpstreamUnavailable as exc:
            return _error(504 if exc.timeout else 502, str(exc), "upstream_error", retry=True)
        return Response(state.upstream.scrub(resp.content), status_code=resp.status_code,
                        media_type=resp.headers.get("content-type", "application/json"))

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Response:
        request_id = uuid.uuid4().hex
        if not authorized(request):
            return _error(401, "invalid or missing client key", "invalid_request_error", "invalid_api_key",
                          request_id)
        try:
            raw = await _read_limited(request, settings.max_body_bytes)
        except BodyTooLarge:
            return _error(413, f"request body larger than {settings.max_body_bytes} bytes",
                          "invalid_request_error", "request_too_large", request_id)
        body = parse_json(raw)
        problem = _validate(body, settings.max_messages)
        if problem:
            return _error(400, problem, "invalid_request_error", None, request_id)
        stream = bool(body.get("stream"))
        meta = {"request_id": request_id, "method": settings.method, "detector": settings.detector,
                "stream": stream, "n_messages": len(body["messages"])}
        t0 = time.perf_counter()
        loop = asyncio.get_running_loop()
        try:
            prepared: Prepared = await loop.run_in_executor(engine.executor, engine.prepare, body)
        except Exception as exc:  # noqa: BLE001 - fail closed on anything
            blocked = isinstance(exc, EgressBlocked)
            reason = safe_reason(exc)
            try:
                await audit_write(dict(meta, event="blocked", sent=False, reason=reason))
            except OSError:
                pass  # nothing is sent either way; the client still gets the error
            if blocked:
                return _error(422, f"the privacy gateway blocked this request; nothing was sent upstream. "
                                   f"{reason}", "privacy_gateway_error", "egress_blocked", request_id)
            code = "privacy_failure" if isinstance(exc, PrivacyGatewayError) else "internal_error"
            return _error(500, f"the privacy gateway failed; nothing was sent upstream. {reason}",
                          "privacy_gateway_error", code, request_id)
        privacy_ms = (time.perf_counter() - t0) * 1e3
        data = json.dumps(prepared.body, ensure_ascii=False).encode("utf-8")
        sha = body_sha256(data)

        async def before_attempt(n: int) -> None:
            await audit_write(dict(meta, event="upstream_attempt", attempt=n, request_sha256=sha,
                                   detected=prepared.detected, request_bytes=len(data),
                                   privacy_ms=round(privacy_ms, 2)))

        assert state.upstream is not None
        try:
            resp = await state.upstream.send("POST", "/chat/completions", data, stream, before_attempt)
        except UpstreamUnavailable as exc:
            return _error(504 if exc.timeout else 502, str(exc), "upstream_error", None, request_id, retry=True)
        except OSError as exc:  # the audit line could not be written: nothing was sent
            return _error(500, f"audit log not writable ({type(exc).__name__}); nothing was sent upstream",
                          "privacy_gateway_error", "audit_failure", request_id)
        headers = {"x-request-id": request_id, "x-privacy-ms": f"{privacy_ms:.1f}"}
        event_stream = resp.headers.get("content-type", "").startswith("text/event-stream")
        if resp.status_code >= 400 or not stream or not event_stream:  # an upstream may ignore stream: true
            content = state.upstream.scrub(await resp.aread())
            await resp.aclose()
            if resp.status_code >= 400:
                return Response(content, status_code=resp.status_code, headers=headers,
                                media_type=resp.headers.get("content-type", "application/json"))
            parsed = parse_json(content)
            if not isinstance(parsed, dict):
                return _error(502, "the upstream answered 200 with a body that is not a JSON object",
                              "upstream_error", None, request_id)
            restored, _ = await anyio.to_thread.run_sync(restore_completion, parsed, prepared)
            if stream:  # the client asked for a stream: give it one, in a single chunk
                return StreamingResponse(_as_stream(restored), status_code=resp.status_code, headers=headers,
                                         media_type="text/event-stream")
            return JSONResponse(restored, status_code=resp.status_code, headers=headers)
        return StreamingResponse(_restore_stream(resp, prepared), status_code=resp.status_code,
                                 headers=headers, media_type="text/event-stream")

    return app


class _ChunkRestorer:
    """Restores a chat-completion SSE stream chunk by chunk (contents and tool-call arguments)."""

    def __init__(self, prepared: Prepared) -> None:
        self.prepared = prepared
        self.text: Dict[int, StreamRestorer] = {}
        self.args: Dict[Tuple[int, int], StreamRestorer] = {}
        self.last: Dict[str, Any] = {"id": "", "created": 0, "model": ""}

    def _text(self, i: int) -> StreamRestorer:
        if i not in self.text:
            self.text[i] = self.prepared.text_restorer()
        return self.text[i]

    def _args(self, i: int, k: int) -> StreamRestorer:
        if (i, k) not in self.args:
            self.args[(i, k)] = self.prepared.arguments_restorer()
        return self.args[(i, k)]

    def _flush_choice(self, i: int, delta: Dict[str, Any]) -> None:
        rest = self.text.pop(i).flush() if i in self.text else ""
        if rest:
            delta["content"] = (delta.get("content") or "") + rest
        for (ci, k) in sorted(key for key in self.args if key[0] == i):
            rest = self.args.pop((ci, k)).flush()
            if rest:
                calls = delta.setdefault("tool_calls", [])
                entry = next((c for c in calls if c.get("index") == k), None)
                if entry is None:
                    entry = {"index": k, "function": {"arguments": ""}}
                    calls.append(entry)
                fn = entry.setdefault("function", {})
                fn["arguments"] = (fn.get("arguments") or "") + rest

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
                fn = call.get("function") or {}
                if isinstance(fn.get("arguments"), str):
                    fn["arguments"] = self._args(i, int(call.get("index", 0))).feed(fn["arguments"])
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


async def _as_stream(data: Dict[str, Any]) -> AsyncIterator[bytes]:
    """A complete (restored) chat completion as server-sent events: one chunk per choice, then [DONE]."""
    for choice in data.get("choices") or []:
        msg = dict(choice.get("message") or {})
        calls = msg.get("tool_calls")
        if calls:
            msg["tool_calls"] = [dict(c, index=k) for k, c in enumerate(calls)]
        yield _sse({"id": data.get("id", ""), "object": "chat.completion.chunk", "created": data.get("created", 0),
                    "model": data.get("model", ""),
                    "choices": [{"index": choice.get("index", 0), "delta": msg,
                                 "finish_reason": choice.get("finish_reason") or "stop"}]})
    yield b"data: [DONE]\n\n"


def _sse(obj: Any) -> bytes:
    return b"data: " + json.dumps(obj, ensure_ascii=False).encode("utf-8") + b"\n\n"


async def _restore_stream(resp: httpx.Response, prepared: Prepared) -> AsyncIterator[bytes]:
    """Relay the upstream's server-sent events with every chunk restored; nothing is emitted twice."""
    restorer = _ChunkRestorer(prepared)
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
                    yield _sse(extra)
                yield b"data: [DONE]\n\n"
                return
            event = parse_json(payload.encode("utf-8"))
            if not isinstance(event, dict):
                yield line.encode("utf-8") + b"\n\n"
                continue
            yield _sse(restorer.chunk(event))
        for extra in restorer.flush_all():
            yield _sse(extra)
    except httpx.HTTPError as exc:
        for extra in restorer.flush_all():
            yield _sse(extra)
        yield _sse(error_body(f"upstream stream interrupted: {type(exc).__name__}", "upstream_error"))
    finally:
        await resp.aclose()
