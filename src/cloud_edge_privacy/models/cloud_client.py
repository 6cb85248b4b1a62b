"""The cloud client: HTTP to any OpenAI-compatible endpoint, and nothing else.

It never sees raw data: the edge pipeline hands it messages that already passed the gateway and the egress
guard.  Retries and timeouts are the ``openai`` client's own; an ``httpx`` request hook writes one audit line
per HTTP attempt (attempt number, sha256 of the exact request body) BEFORE the bytes are sent.  A 200 whose
body is malformed or has no choices is retried a bounded number of times too, and every error names the
endpoint.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional

from ..audit import AuditLog, body_sha256
from ..errors import CloudCallError, ConfigError
from ..hashing import stable_hash
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


class CloudClient:
    """``chat(messages, audit_meta)`` -> answer, token counts, latency, attempts, cache flag."""

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

    def chat(self, messages: List[Dict[str, Any]], audit_meta: Dict[str, Any]) -> Dict[str, Any]:
        import openai

        key = self.cache_key(messages)
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            # Nothing leaves now; the same bytes left when the entry was made.  Recorded all the same.
            self.audit.write(dict(audit_meta, event="cache_hit", request_key=key, messages=messages, attempt=0))
            return dict(hit, cache_hit=True, attempts=0)
        attempts = {"n": 0}

        def on_request(request: Any) -> None:
            attempts["n"] += 1
            body = request.read() if hasattr(request, "read") else b""
            # Raises on I/O failure: httpx then aborts the request before sending it.
            self.audit.write(dict(audit_meta, event="http_attempt", attempt=attempts["n"], request_key=key,
                                  request_sha256=body_sha256(body), endpoint=self.endpoint.kind,
                                  model=self.endpoint.model, messages=messages))

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
                return dict(out, cache_hit=False, attempts=attempts["n"])
        finally:
            client.close()
        raise CloudCallError(f"{self.endpoint.describe()}: {last} after {attempts['n']} attempt(s)")
