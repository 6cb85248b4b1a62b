"""The proxy's HTTP calls to the upstream: bounded timeouts and retries, an audit line before each attempt,
the upstream key from the environment only, and upstream errors passed back with their status."""
from __future__ import annotations

import asyncio
import json
from typing import Any, Awaitable, Callable, Dict, Optional

import httpx

RETRY_STATUSES = (408, 429, 502, 503, 504)  # a 500 is the upstream's own bug: passed through, not retried
MAX_BACKOFF_S = 4.0


class UpstreamUnavailable(Exception):
    """No HTTP answer after every attempt (connection error or timeout); ``timeout`` tells which."""

    def __init__(self, attempts: int, kind: str, timeout: bool) -> None:
        super().__init__(f"upstream unreachable after {attempts} attempt(s): {kind}")
        self.attempts, self.kind, self.timeout = attempts, kind, timeout


class Upstream:
    """One ``httpx.AsyncClient`` (connection pool) for the life of the proxy."""

    def __init__(self, base_url: str, api_key: str, timeout_s: float, connect_timeout_s: float,
                 max_retries: int, transport: Optional[httpx.AsyncBaseTransport] = None) -> None:
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self.max_retries = max_retries
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.client = httpx.AsyncClient(timeout=httpx.Timeout(timeout_s, connect=connect_timeout_s),
                                        headers=headers, transport=transport, follow_redirects=False,
                                        limits=httpx.Limits(max_connections=64, max_keepalive_connections=16))

    async def aclose(self) -> None:
        await self.client.aclose()

    def scrub(self, data: bytes) -> bytes:
        """An upstream error body with the upstream key removed, should the upstream quote it."""
        if self._api_key and self._api_key.encode() in data:
            data = data.replace(self._api_key.encode(), b"[upstream key withheld]")
        return data

    async def send(self, method: str, path: str, body: Optional[bytes], stream: bool,
                   before_attempt: Callable[[int], Awaitable[None]]) -> httpx.Response:
        """Send with bounded retries; ``before_attempt(n)`` runs (and must succeed) before attempt n.

        Returns the last response (any status; streamed responses are open: the caller closes them);
        raises :class:`UpstreamUnavailable` when no attempt got an answer.
        """
        url = f"{self.base_url}{path}"
        headers = {"Content-Type": "application/json"} if body is not None else {}
        if stream:
            headers["Accept"] = "text/event-stream"
        last_exc: Optional[Exception] = None
        for attempt in range(1, self.max_retries + 2):
            await before_attempt(attempt)
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


def error_body(message: str, err_type: str, code: Optional[str] = None) -> Dict[str, Any]:
    """An OpenAI-style error object."""
    return {"error": {"message": message, "type": err_type, "param": None, "code": code}}


def parse_json(data: bytes) -> Any:
    try:
        return json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
