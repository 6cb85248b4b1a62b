"""The proxy's privacy engine: the edge pipeline (one code path with the benchmark) run in worker threads.

Each worker thread owns one :class:`ProxyPipeline` (its own detectors and their caches), borrowed from a
queue for the length of one request, so no detector is ever used by two threads at once.  The audit log is
shared (it has its own lock).  Nothing here keeps per-conversation state: pseudonyms are keyed by HMAC under
the secret key (or a key derived from it per conversation, see :func:`scope_randomness`), so re-protecting
the full history of every request gives the same surrogates every turn.
"""
from __future__ import annotations

import json
import queue
import secrets
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional, Set, Tuple

from ..audit import AuditLog
from ..core.context import RunContext
from ..desensitization.restore import OnePassRestorer, Restored, StreamRestorer
from ..core.gateway import ProtectedFields
from ..core.module_configs import CloudModelConfig
from ..core.pipeline import EdgePipeline
from ..results import Stage
from ..randomness import Randomness
from .request import build_outgoing, url_arguments
from .settings import PER_CONVERSATION, PER_KEY, PER_REQUEST, SCOPE, ProxySettings


class ProxyPipeline(EdgePipeline):
    """:class:`EdgePipeline` with the proxy's keyed randomness (the secret key is required, so the same value
    gets the same surrogate in every request) and a named egress-guard detector."""

    def __init__(self, ctx: RunContext, config: CloudModelConfig, randomness: Randomness,
                 guard_detector: str = "structured") -> None:
        super().__init__(ctx, config, randomness=randomness, guard_detector=guard_detector)


@dataclass
class Prepared:
    """A request that passed protection and the egress guard: what to send and how to restore answers."""

    prot: ProtectedFields
    body: Dict[str, Any]            # the outgoing request body
    detected: Dict[str, int]        # category -> number of detected spans (no values)
    timings_ms: Dict[str, float]
    dropped: int = 0                # request keys not on the allow-list (not forwarded)
    url_args: Dict[str, Set[str]] = field(default_factory=dict)  # tool name sent -> URL-typed argument names

    def restorer(self) -> OnePassRestorer:
        r = self.prot.result.restorer if self.prot.result is not None else None
        return r if isinstance(r, OnePassRestorer) else OnePassRestorer()

    def restore(self, text: str) -> str:
        return self.restorer().restore(text)

    def restore_report(self, text: str) -> Restored:
        return self.restorer().restore_report(text)

    def text_restorer(self) -> StreamRestorer:
        return StreamRestorer(self.restorer())

    def restore_arguments(self, tool_name: str, arguments: str) -> Tuple[str, int]:
        """A tool call's JSON arguments restored value by value, except URL-typed ones; (text, withheld)."""
        return restore_arguments(arguments, self.restorer(), self.url_args.get(tool_name, set()))


def scope_randomness(base: Randomness, scope: str, body: Dict[str, Any],
                     conversation_id: Optional[str]) -> Tuple[Randomness, str]:
    """The keyed randomness and date-shift scope of one request under the configured pseudonym scope.

    ``key``: one key for every request (a person gets the same surrogate in every request); ``conversation``:
    a key derived from the conversation id (the client's ``X-Conversation-Id`` header, else a keyed digest of
    the conversation's first user message, which a client re-sends every turn); ``request``: a fresh random
    key per request (answers are restored within the request; nothing links two requests).
    """
    if scope == PER_KEY:
        return base, SCOPE
    if scope == PER_REQUEST:
        return Randomness(base.mode, secrets.token_bytes(32), base.seed, False), PER_REQUEST
    if scope != PER_CONVERSATION:
        raise ValueError(f"unknown pseudonym scope {scope!r}")
    if not conversation_id:
        msgs = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        first = next((m for m in msgs if m.get("role") == "user"), msgs[0] if msgs else {})
        conversation_id = "derived:" + base.digest(
            "conversation", json.dumps(first.get("content"), sort_keys=True, ensure_ascii=False)).hex()
    key = base.digest("pseudonym-scope", PER_CONVERSATION, conversation_id)
    return Randomness(base.mode, key, base.seed, base.persistent_key), PER_CONVERSATION


class PrivacyEngine:
    """``prepare(body)`` in a worker thread: allow-list, protect every text slot, guard, build the body."""

    def __init__(self, settings: ProxySettings, audit: AuditLog, randomness: Randomness) -> None:
        self.settings = settings
        self.audit = audit
        self.randomness = randomness
        self.config = CloudModelConfig(privacy_method=settings.method, method_params=settings.method_params,
                                       detector=settings.detector, randomness="deployment")
        self._idle: "queue.Queue[ProxyPipeline]" = queue.Queue()
        for _ in range(settings.workers):
            ctx = RunContext(settings.audit_dir, _audit=audit)
            self._idle.put(ProxyPipeline(ctx, self.config, randomness, settings.guard_detector))
        self.executor = ThreadPoolExecutor(max_workers=settings.workers, thread_name_prefix="cep-privacy")

    @contextmanager
    def pipeline(self) -> Iterator[ProxyPipeline]:
        """Borrow one pipeline for the current thread (never shared between threads at the same time)."""
        p = self._idle.get()
        try:
            yield p
        finally:
            self._idle.put(p)

    def for_each_pipeline(self, fn: Callable[[ProxyPipeline], None]) -> None:
        """Apply ``fn`` to every pipeline (waits until each is idle); for warm-up and tests."""
        taken: List[ProxyPipeline] = [self._idle.get() for _ in range(self.settings.workers)]
        try:
            for p in taken:
                fn(p)
        finally:
            for p in taken:
                self._idle.put(p)

    def warm_up(self) -> None:
        """Load the models and run the whole protect + guard path once, so a broken method or detector
        stops the proxy at start-up instead of failing every request."""
        probe = "Warm-up: Ms Anna Berg (anna.berg@example.org) wrote on 1 May 2001."
        sentinel = "Anna Berg"

        from ..errors import ConfigError, PrivacyGatewayError
        from ..core.pipeline import safe_reason

        def run(p: ProxyPipeline) -> None:
            try:
                prot, _ = p.protect_texts([probe], scope=SCOPE)
            except PrivacyGatewayError as exc:
                raise ConfigError(f"warm-up request (a name, an e-mail, a date) failed with method "
                                  f"{self.settings.method!r} and detector {self.settings.detector!r}, so every "
                                  f"such request would be refused: {safe_reason(exc)}") from None
            if sentinel in prot.fields[0]:
                raise ConfigError(f"warm-up: method {self.settings.method!r} with detector "
                                  f"{self.settings.detector!r} left a planted name in the request")

        self.for_each_pipeline(run)

    def tool_call_id(self, client_id: str) -> str:
        """The id sent upstream for a client's tool-call id: keyed, consistent within and across requests."""
        return "call_" + self.randomness.digest("tool-call-id", client_id).hex()[:24]

    def prepare(self, body: Any, conversation_id: Optional[str] = None, model: Optional[str] = None) -> Prepared:
        """Build the allow-listed body, protect every text slot of it together, guard them; ``model`` is the
        name sent upstream (default: the setting, else the client's, protected like any text).

        Raises :class:`~.request.InvalidRequest` (a 400), ``PrivacyGatewayError`` or ``EgressBlocked``:
        then nothing may be sent."""
        outgoing = build_outgoing(body, self.tool_call_id, model if model is not None else self.settings.model,
                                  self.settings.max_messages)
        rand, scope = scope_randomness(self.randomness, self.settings.pseudonym_scope, body, conversation_id)
        with self.pipeline() as p:
            prot, guard_ms = p.protect_texts(outgoing.texts, scope=scope, randomness=rand)
        out = outgoing.fill(prot.fields)
        detected = dict(sorted(Counter(s.category for s in prot.spans).items()))
        timings = dict(prot.timings_ms, **{Stage.EGRESS_GUARD.value: guard_ms})
        return Prepared(prot, out, detected, timings, outgoing.dropped, url_arguments(out))


def restore_arguments(arguments: str, restorer: OnePassRestorer,
                      url_keys: Set[str] = frozenset()) -> Tuple[str, int]:
    """Restore the string values (and keys) of a tool call's JSON arguments, except values of URL-typed
    arguments (left as the surrogates); non-JSON text is restored as text.  Returns (text, withheld)."""
    withheld = [0]
    pattern = restorer.pattern()

    def text(v: str) -> str:
        r = restorer.restore_report(v)
        withheld[0] += r.withheld
        return r.text

    try:
        value = json.loads(arguments)
    except (json.JSONDecodeError, TypeError):
        return text(arguments), withheld[0]

    def walk(v: Any, key: Optional[str] = None) -> Any:
        if isinstance(v, str):
            if key is not None and key in url_keys:
                withheld[0] += len(pattern.findall(v)) if pattern is not None else 0
                return v
            return text(v)
        if isinstance(v, list):
            return [walk(x, key) for x in v]
        if isinstance(v, dict):
            return {restorer.restore(k): walk(x, k) for k, x in v.items()}
        return v

    new = walk(value)
    return (arguments if new == value else json.dumps(new, ensure_ascii=False)), withheld[0]


def restore_completion(data: Dict[str, Any], prepared: Prepared) -> Tuple[Dict[str, Any], int]:
    """Restore a (non-streamed) chat completion in place: contents, tool names and arguments.
    Returns the data and the number of surrogates withheld inside links."""
    withheld = 0
    for choice in data.get("choices") or []:
        msg = choice.get("message") or {}
        for key in ("content", "reasoning_content", "refusal"):
            if isinstance(msg.get(key), str):
                r = prepared.restore_report(msg[key])
                withheld += r.withheld
                msg[key] = r.text
        calls = list(msg.get("tool_calls") or [])
        if isinstance(msg.get("function_call"), dict):
            calls.append({"function": msg["function_call"]})
        for call in calls:
            fn = call.get("function") or {}
            sent_name = fn.get("name") if isinstance(fn.get("name"), str) else ""
            if isinstance(fn.get("arguments"), str):
                fn["arguments"], n = prepared.restore_arguments(sent_name, fn["arguments"])
                withheld += n
            if sent_name:
                fn["name"] = prepared.restore(sent_name)
    return data, withheld
