"""The cloud client: HTTP to any OpenAI-compatible endpoint, and nothing else; the one seam through which
every entry point (Ianvs adapters, runner, library, proxy) reaches the cloud, in a sync and an async face.

It never sees raw data: the edge pipeline (or the proxy's privacy engine) hands it a request that already
passed the gateway and the egress guard.  Both faces write one audit line per HTTP attempt, in one format
(:func:`attempt_entry`: event ``http_attempt``, attempt number, sha256 and size of the exact request body,
endpoint kind, model, and the messages when the log records content) BEFORE the bytes are sent; if it cannot
be written nothing is sent.

* :class:`CloudClient` (sync, the benchmark and the library): retries and timeouts are the ``openai``
  client's own, the audit line comes from an ``httpx`` request hook; a 200 whose body is malformed or has no
  choices is retried a bounded number of times too; every error names the endpoint.
* :class:`AsyncCloudClient` (async, the proxy): one ``httpx.AsyncClient`` for the life of the proxy, bounded
  retries on connection errors and 408/429/502/503/504, the upstream's answer passed back as it came
  (streamed or not) so the proxy can restore it.
"""
from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional

import httpx

from ..audit import AuditLog, body_sha256
from ..errors import CloudCallError, ConfigError
from ..hashing import stable_hash
from ..results import CloudReply
from .response_cache import ResponseCache


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    model: str
    api_key: str
    kind: str  # "remote" or "local-llama.cpp"

    def describe(self) -> str:
        return f"{self.kind} endpoint {self.base_url} (model {self.model})"


def resolve_endpoint(base_url_env: str, model_env: str, api_key_env: str, local_model: str) -> Endpoint:
    """The endpoint named by environment variables; unset base URL -> start the local llama.cpp server."""
    base = os.environ.get(base_url_env)
    if base:
        model = os.environ.get(model_env)
        if not model:
            raise ConfigError(f"${base_url_env} is set but ${model_env} (the model name) is not")
        return Endpoint(base, model, os.environ.get(api_key_env, ""), "remote")
    from .local_server import shared_local_server

    srv = shared_local_server(local_model)
    return Endpoint(srv.base_url, local_model, "local", "local-llama.cpp")


def attempt_entry(meta: Dict[str, Any], attempt: int, body: bytes, endpoint: Endpoint,
                  messages: Optional[List[Dict[str, Any]]]) -> Dict[str, Any]:
    """The one audit line written before an HTTP attempt (sync and async clients alike).  ``messages`` are
    exactly what the body carries; an :class:`~..audit.AuditLog` that does not record content drops them."""
    return dict(meta, event="http_attempt", attempt=attempt, request_sha256=body_sha256(body),
                request_bytes=len(body), endpoint=endpoint.kind, model=endpoint.model, messages=messages)


class CloudClient:
    """``chat(messages, audit_meta)`` -> :class:`~..results.CloudReply` (answer, token counts, latency,
    attempts, cache flag)."""

    def __init__(self, endpoint: Endpoint, audit: AuditLog, params: Dict[str, Any], timeout_s: float = 300.0,
                 max_retries: int = 3, malformed_retries: int = 2, cache: Optional[ResponseCache] = None) -> None:
        self.endpoint = endpoint
        self.audit = audit
        self.params = dict(params)
        self.timeout_s = float(timeout_s)
        self.max_retries = int(max_retries)
        self.malformed_retries = int(malformed_retries)
        self.cache = cache

    def _client(self, on_request: Callable[[Any], None]) -> Any:
        import openai

        http = openai.DefaultHttpxClient(event_hooks={"request": [on_request]})
        return openai.OpenAI(base_url=self.endpoint.base_url, api_key=self.endpoint.api_key or "unset",
                             timeout=self.timeout_s, max_retries=self.max_retries, http_client=http)

    def cache_key(self, messages: List[Dict[str, Any]]) -> str:
        ep = self.endpoint
        return stable_hash({"endpoint": ep.base_url if ep.kind == "remote" else ep.kind, "model": ep.model,
                            "messages": messages, **self.params})

    def chat(self, messages: List[Dict[str, Any]], audit_meta: Dict[str, Any]) -> CloudReply:
        import openai

        key = self.cache_key(messages)
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            # Nothing leaves now; the same bytes left when the entry was made.  Recorded all the same.
            self.audit.write(dict(audit_meta, event="cache_hit", request_key=key, messages=messages, attempt=0))
            return CloudReply(**hit, cache_hit=True, attempts=0)
        attempts = {"n": 0}

        def on_request(request: Any) -> None:
            attempts["n"] += 1
            body = request.read() if hasattr(request, "read") else b""
            # Raises on I/O failure: httpx then aborts the request before sending it.
            self.audit.write(attempt_entry(dict(audit_meta, request_key=key), attempts["n"], body,
                                           self.endpoint, messages))

        client = self._client(on_request)
        last: Optional[str] = None
        t0 = time.perf_counter()
        try:
            for _ in range(self.malformed_retries + 1):
                try:
                    resp = client.chat.completions.create(model=self.endpoint.model, messages=messages,
                                                          **self.params)
                except openai.AuthenticationError:
                    raise CloudCallError(f"{self.endpoint.describe()} rejected the API key (HTTP 401)") from None
                except openai.APIStatusError as exc:
                    raise CloudCallError(f"{self.endpoint.describe()} answered HTTP {exc.status_code} "
                                         f"after {attempts['n']} attempt(s)") from None
                except openai.APIConnectionError as exc:  # includes timeouts, after the client's retries
                    raise CloudCallError(f"{self.endpoint.describe()} unreachable after {attempts['n']} "
                                         f"attempt(s): {type(exc).__name__}") from None
                except (ValueError, TypeError, AttributeError) as exc:  # 200 with a body that is not JSON
                    last = f"malformed response ({type(exc).__name__})"
                    continue
                choices = getattr(resp, "choices", None) or []
                if not choices or getattr(choices[0], "message", None) is None:
                    last = "response without choices"
                    continue
                usage = getattr(resp, "usage", None)
                out = {"answer": (choices[0].message.content or "").strip(),
                       "prompt_tokens": getattr(usage, "prompt_tokens", 0) or 0,
                       "completion_tokens": getattr(usage, "completion_tokens", 0) or 0,
                       "call_ms": (time.perf_counter() - t0) * 1e3}
                if self.cache is not None:
                    self.cache.put(key, out)
                return CloudReply(**out, cache_hit=False, attempts=attempts["n"])
        finally:
            client.close()
        raise CloudCallError(f"{self.endpoint.describe()}: {last} after {attempts['n']} attempt(s)")


RETRY_STATUSES = (408, 429, 502, 503, 504)  # a 500 is the upstream's own bug: passed through, not retried
MAX_BACKOFF_S = 4.0


class UpstreamUnavailable(Exception):
    """No HTTP answer after every attempt (connection error or timeout); ``timeout`` tells which."""

    def __init__(self, attempts: int, kind: str, timeout: bool) -> None:
        super().__init__(f"upstream unreachable after {attempts} attempt(s): {kind}")
        self.attempts, self.kind, self.timeout = attempts, kind, timeout


class AsyncCloudClient:
    """The async face of the cloud seam (the proxy): one connection pool, an audit line before each attempt.

    ``send`` returns the upstream's last response (any status; a streamed response is open and the caller
    closes it) or raises :class:`UpstreamUnavailable`; an audit write that fails raises ``OSError`` before
    anything is sent.
    """

    def __init__(self, endpoint: Endpoint, audit: AuditLog, timeout_s: float, connect_timeout_s: float,
                 max_retries: int, transport: Optional[httpx.AsyncBaseTransport] = None) -> None:
        self.endpoint = endpoint
        self.audit = audit
        self.max_retries = max_retries
        headers = {"Authorization": f"Bearer {endpoint.api_key}"} if endpoint.api_key else {}
        self.client = httpx.AsyncClient(timeout=httpx.Timeout(timeout_s, connect=connect_timeout_s),
                                        headers=headers, transport=transport, follow_redirects=False,
                                        limits=httpx.Limits(max_connections=64, max_keepalive_connections=16))

    async def aclose(self) -> None:
        await self.client.aclose()

    def scrub(self, data: bytes) -> bytes:
        """An upstream body with the upstream key removed, should the upstream quote it."""
        key = self.endpoint.api_key
        if key and key.encode() in data:
            data = data.replace(key.encode(), b"[upstream key withheld]")
        return data

    async def _audit(self, meta: Dict[str, Any], attempt: int, body: bytes,
                     messages: Optional[List[Dict[str, Any]]]) -> None:
        entry = attempt_entry(meta, attempt, body, self.endpoint, messages)
        await asyncio.get_running_loop().run_in_executor(None, self.audit.write, entry)

    async def send(self, method: str, path: str, payload: Optional[Dict[str, Any]], stream: bool,
                   audit_meta: Optional[Dict[str, Any]] = None) -> httpx.Response:
        """Send ``payload`` (JSON) with bounded retries; an audit line before every attempt when
        ``audit_meta`` is given (every request that carries data gives it)."""
        url = f"{self.endpoint.base_url.rstrip('/')}{path}"
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8") if payload is not None else None
        headers = {"Content-Type": "application/json"} if body is not None else {}
        if stream:
            headers["Accept"] = "text/event-stream"
        messages = payload.get("messages") if isinstance(payload, dict) else None
        last_exc: Optional[Exception] = None
        for attempt in range(1, self.max_retries + 2):
            if audit_meta is not None:
                await self._audit(audit_meta, attempt, body or b"", messages)
            req = self.client.build_request(method, url, content=body, headers=headers)
            try:
                resp = await self.client.send(req, stream=stream)
            except httpx.TransportError as exc:
                last_exc = exc
                if attempt <= self.max_retries:
                    await asyncio.sleep(min(MAX_BACKOFF_S, 0.25 * 2 ** (attempt - 1)))
                continue
            if resp.status_code in RETRY_STATUSES and attempt <= self.max_retries:
                delay = _retry_after(resp) or min(MAX_BACKOFF_S, 0.25 * 2 ** (attempt - 1))
                await resp.aclose()
                await asyncio.sleep(min(delay, MAX_BACKOFF_S))
                continue
            resp.extensions["cep_attempts"] = attempt
            return resp
        assert last_exc is not None
        raise UpstreamUnavailable(self.max_retries + 1, type(last_exc).__name__,
                                  isinstance(last_exc, httpx.TimeoutException))


def _retry_after(resp: httpx.Response) -> Optional[float]:
    try:
        return max(0.0, float(resp.headers.get("retry-after", "")))
    except ValueError:
        return None
