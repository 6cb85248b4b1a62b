"""The OpenAI-compatible FastAPI app: ``/v1/chat/completions`` (plain and streamed), ``/v1/models``, ``/healthz``.

Per request: size limit and client key -> the allow-listed outgoing body, every text slot of it protected and
guarded in a worker thread (the edge pipeline) -> the cloud seam (:class:`AsyncCloudClient`: an audit line
before each upstream attempt) -> restore the answer (contents, streamed chunks, tool names and arguments;
never inside links).  Any privacy failure answers with an OpenAI-style error and sends nothing upstream;
upstream errors come back with their own status; unknown routes get an OpenAI-style 404.
"""
from __future__ import annotations

import asyncio
import hmac
import json
import time
import uuid
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Dict, Optional, Tuple

import anyio.to_thread
import httpx
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..audit import AuditLog
from ..errors import PrivacyGatewayError
from ..models.cloud_client import AsyncCloudClient, Endpoint, UpstreamUnavailable
from ..core.pipeline import EgressBlocked, safe_reason
from ..randomness import Randomness
from .engine import MalformedUpstream, Prepared, PrivacyBudgetExceeded, PrivacyEngine, RequestTooLarge, \
    restore_completion
from .request import InvalidRequest, parse_body
from .responses import error_body, parse_upstream_json
from .settings import ProxySettings, Secrets, is_loopback
from .stream import as_stream, restore_stream

NO_RETRY = {"x-should-retry": "false"}  # the openai client honours it: a blocked request stays blocked
CONVERSATION_HEADER = "x-conversation-id"


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


@dataclass
class ProxyState:
    """Everything the handlers share; immutable after start-up except through thread-safe objects."""

    settings: ProxySettings
    secrets: Secrets
    engine: PrivacyEngine
    audit: AuditLog
    upstream: Optional[AsyncCloudClient] = None                                 # the default upstream
    routes: Dict[str, AsyncCloudClient] = field(default_factory=dict)          # upstreams by model name


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
        def client(base_url: str, model: str, key: str) -> AsyncCloudClient:
            return AsyncCloudClient(Endpoint(base_url, model, key, "remote"), audit, settings.timeout_s,
                                    settings.connect_timeout_s, settings.max_retries, transport)

        if settings.upstream is not None:
            state.upstream = client(settings.upstream, settings.model or "", secrets.upstream_key)
        for r in settings.upstreams:
            state.routes[r.model_name] = client(r.base_url, r.model or r.model_name,
                                                secrets.route_keys.get(r.model_name, ""))
        try:
            yield
        finally:
            for c in [state.upstream, *state.routes.values()]:
                if c is not None:
                    await c.aclose()
            if owns_engine:
                engine.close()

    app = FastAPI(title="cloud-edge-privacy proxy", lifespan=lifespan, docs_url=None, redoc_url=None,
                  openapi_url=None)
    app.state.proxy = state

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        """Unknown routes and wrong methods answer as the OpenAI API does: a JSON error object."""
        if exc.status_code == 404:
            message = f"unknown route {request.method} {request.url.path} (this proxy serves /v1/chat/completions, " \
                      f"/v1/models and /healthz)"
        else:
            message = str(exc.detail)
        return JSONResponse(error_body(message, "invalid_request_error", "unknown_url" if exc.status_code == 404
                                       else None), status_code=exc.status_code, headers=dict(NO_RETRY))

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(400, "invalid request", "invalid_request_error")

    @app.exception_handler(Exception)
    async def internal_error(request: Request, exc: Exception) -> JSONResponse:
        """Anything unforeseen is still an OpenAI-style JSON error (its message may quote input: withheld)."""
        return _error(500, f"internal error in the privacy proxy ({type(exc).__name__})", "privacy_gateway_error",
                      "internal_error")

    def authorized(request: Request) -> bool:
        if not secrets.client_key:
            return True
        given = request.headers.get("authorization", "")
        token = given[7:] if given[:7].lower() == "bearer " else ""
        return hmac.compare_digest(token.encode(), secrets.client_key.encode())

    async def audit_write(entry: Dict[str, Any]) -> None:
        await anyio.to_thread.run_sync(audit.write, entry)

    def route(body: Any) -> Tuple[AsyncCloudClient, Optional[str]]:
        """The upstream for a request and the model name to send (None: the setting or the client's)."""
        name = body.get("model") if isinstance(body, dict) else None
        r = settings.route(name)
        if r is not None:
            return state.routes[r.model_name], r.model or r.model_name
        if state.upstream is None:
            raise InvalidRequest(f"unknown model: this proxy serves {sorted(state.routes)}")
        return state.upstream, None

    @app.get("/healthz")
    async def healthz() -> Dict[str, Any]:
        return {"status": "ok", "method": settings.method, "detector": settings.detector,
                "guard_detector": settings.guard_detector, "pseudonym_scope": settings.pseudonym_scope,
                "randomness": rand.label, "workers": settings.workers}

    @app.get("/v1/models")
    async def models(request: Request) -> Response:
        if not authorized(request):
            return _error(401, "invalid or missing client key", "invalid_request_error", "invalid_api_key")
        if state.upstream is None or settings.upstreams:  # the configured names (the default's too)
            names = [r.model_name for r in settings.upstreams] + ([settings.model] if settings.model else [])
            return JSONResponse({"object": "list", "data": [{"id": n, "object": "model", "owned_by": "proxy"}
                                                            for n in names]})
        try:  # carries no data: no audit line
            resp = await state.upstream.send("GET", "/models", None, False)
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
        body = parse_body(raw)
        stream = body.get("stream") is True if isinstance(body, dict) else False
        meta = {"request_id": request_id, "method": settings.method, "detector": settings.detector,
                "stream": stream, "pseudonym_scope": settings.pseudonym_scope,
                "n_messages": len(body.get("messages") or []) if isinstance(body, dict) else 0}
        t0 = time.perf_counter()
        loop = asyncio.get_running_loop()
        try:
            upstream, model = route(body)
            n_chars = engine.text_chars(body, model)
            large = engine.is_large(n_chars)
            meta["lane"] = "process" if large else "thread"
            prepared: Prepared = await loop.run_in_executor(
                engine.large_executor if large else engine.executor,
                engine.prepare_large if large else engine.prepare, body,
                request.headers.get(CONVERSATION_HEADER), model)
        except RequestTooLarge as exc:
            return _error(413, str(exc), "invalid_request_error", "request_too_large", request_id)
        except InvalidRequest as exc:
            return _error(400, str(exc), "invalid_request_error", None, request_id)
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
            if isinstance(exc, PrivacyBudgetExceeded):
                return _error(422, str(exc), "privacy_gateway_error", "privacy_budget_exceeded", request_id)
            code = "privacy_failure" if isinstance(exc, PrivacyGatewayError) else "internal_error"
            return _error(500, f"the privacy gateway failed; nothing was sent upstream. {reason}",
                          "privacy_gateway_error", code, request_id)
        privacy_ms = (time.perf_counter() - t0) * 1e3
        meta.update(detected=prepared.detected, dropped_fields=prepared.dropped, privacy_ms=round(privacy_ms, 2))
        try:
            resp = await upstream.send("POST", "/chat/completions", prepared.body, stream, meta)
        except UpstreamUnavailable as exc:
            return _error(504 if exc.timeout else 502, str(exc), "upstream_error", None, request_id, retry=True)
        except OSError as exc:  # the audit line could not be written: nothing was sent
            return _error(500, f"audit log not writable ({type(exc).__name__}); nothing was sent upstream",
                          "privacy_gateway_error", "audit_failure", request_id)
        headers = {"x-request-id": request_id, "x-privacy-ms": f"{privacy_ms:.1f}",
                   "x-privacy-dropped-fields": str(prepared.dropped)}
        event_stream = resp.headers.get("content-type", "").startswith("text/event-stream")
        if resp.status_code >= 400 or not stream or not event_stream:  # an upstream may ignore stream: true
            content = upstream.scrub(await resp.aread())
            await resp.aclose()
            if resp.status_code >= 400:
                return Response(content, status_code=resp.status_code, headers=headers,
                                media_type=resp.headers.get("content-type", "application/json"))
            parsed = parse_upstream_json(content)
            try:
                if parsed is None:
                    raise MalformedUpstream("the body is not valid JSON")
                restored, withheld = await anyio.to_thread.run_sync(restore_completion, parsed, prepared)
                restored["privacy_withheld"] = withheld
                payload = json.dumps(restored, ensure_ascii=False, allow_nan=False).encode("utf-8")
            except (MalformedUpstream, ValueError, TypeError, AttributeError, RecursionError) as exc:
                what = str(exc) if isinstance(exc, MalformedUpstream) else type(exc).__name__
                return _error(502, f"the upstream answered 200 with a body that is not a chat completion: {what}",
                              "upstream_error", "malformed_upstream_response", request_id)
            headers["x-privacy-withheld"] = str(withheld)  # surrogates left where a client may follow them
            if stream:  # the client asked for a stream: give it one, in a single chunk
                return StreamingResponse(as_stream(restored, withheld), status_code=resp.status_code,
                                         headers=headers, media_type="text/event-stream")
            return Response(payload, status_code=resp.status_code, headers=headers, media_type="application/json")
        return StreamingResponse(restore_stream(resp, prepared), status_code=resp.status_code,
                                 headers=headers, media_type="text/event-stream")

    return app
