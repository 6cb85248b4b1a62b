"""The proxy's privacy engine: the edge pipeline (one code path with the benchmark) run in worker threads.

Each worker thread owns one :class:`ProxyPipeline` (its own detectors and their caches), borrowed from a
queue for the length of one request, so no detector is ever used by two threads at once.  The audit log is
shared (it has its own lock).  Nothing here keeps per-conversation state: pseudonyms are keyed by HMAC under
the secret key, so re-protecting the full history of every request gives the same surrogates every turn.
"""
from __future__ import annotations

import json
import queue
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Tuple

from ..audit import AuditLog
from ..context import RunContext
from ..desensitization.restore import OnePassRestorer
from ..gateway import ProtectedFields
from ..module_configs import CloudModelConfig
from ..pipeline import EdgePipeline
from ..randomness import Randomness
from .settings import SCOPE, ProxySettings
from .stream import StreamRestorer, json_escaped_mapping

# Request fields forwarded upstream; anything else (``user``, ``metadata``, ``store``, unknown keys) is dropped.
FORWARDED = ("model", "messages", "temperature", "top_p", "max_tokens", "max_completion_tokens", "stream",
             "stream_options", "stop", "n", "seed", "tools", "tool_choice", "parallel_tool_calls",
             "response_format", "presence_penalty", "frequency_penalty", "logit_bias", "logprobs",
             "top_logprobs")
# Forwarded fields that carry free text besides the messages: the egress guard scans them too.
SCANNED = ("tools", "stop", "response_format", "tool_choice")


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
    body: Dict[str, Any]           # the outgoing request body
    detected: Dict[str, int]       # category -> number of detected spans (no values)
    timings_ms: Dict[str, float]

    def restore(self, text: str) -> str:
        return self.prot.restore(text)

    def mapping(self) -> Dict[str, str]:
        """surrogate/placeholder -> original, for the streaming restorers ({} for irreversible methods)."""
        return dict(self.prot.result.vault) if self.prot.result is not None else {}

    def _ignore_case(self) -> bool:
        """Match case the way the operator's own restorer does, so streamed and plain answers agree."""
        restorer = self.prot.result.restorer if self.prot.result is not None else None
        return bool(getattr(restorer, "_ignore_case", True)) if isinstance(restorer, OnePassRestorer) else True

    def text_restorer(self) -> StreamRestorer:
        return StreamRestorer(self.mapping(), ignore_case=self._ignore_case())

    def arguments_restorer(self) -> StreamRestorer:
        """For tool-call arguments, which are JSON text: surrogates as they appear inside JSON strings."""
        return StreamRestorer(json_escaped_mapping(self.mapping()), ignore_case=self._ignore_case())


class PrivacyEngine:
    """``prepare(body)`` in a worker thread: protect every message, guard, build the outgoing body."""

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
        probe = [{"role": "user", "content": "Warm-up: Ms Anna Berg (anna.berg@example.org) wrote on 1 May 2001."}]
        sentinel = "Anna Berg"

        from ..errors import ConfigError, PrivacyGatewayError
        from ..pipeline import safe_reason

        def run(p: ProxyPipeline) -> None:
            try:
                prot, out = p.protect_messages(probe, scope=SCOPE)
                p.guard(prot, out)
            except PrivacyGatewayError as exc:
                raise ConfigError(f"warm-up request (a name, an e-mail, a date) failed with method "
                                  f"{self.settings.method!r} and detector {self.settings.detector!r}, so every "
                                  f"such request would be refused: {safe_reason(exc)}") from None
            if sentinel in json.dumps(out):
                raise ConfigError(f"warm-up: method {self.settings.method!r} with detector "
                                  f"{self.settings.detector!r} left a planted name in the request")

        self.for_each_pipeline(run)

    def prepare(self, body: Dict[str, Any]) -> Prepared:
        """Protect and guard one request (raises PrivacyGatewayError / EgressBlocked: nothing may be sent)."""
        out = {k: body[k] for k in FORWARDED if k in body}
        if self.settings.model:
            out["model"] = self.settings.model
        with self.pipeline() as p:
            prot, messages = p.protect_messages(body["messages"], scope=SCOPE)
            extra = [json.dumps(body[k], ensure_ascii=False) for k in SCANNED if body.get(k) is not None]
            # extra texts ride along as pseudo-messages: guard() scans the content of each (rule 3)
            guard_ms = p.guard(prot, messages, extra_texts=extra)
        # a participant's ``name`` is free text the operators do not rewrite: it is not forwarded
        out["messages"] = [{k: v for k, v in m.items() if k != "name" or m.get("role") in ("tool", "function")}
                           for m in messages]
        detected = dict(sorted(Counter(s.category for s in prot.spans).items()))
        timings = dict(prot.timings_ms, egress_guard_ms=guard_ms)
        return Prepared(prot, out, detected, timings)


def restore_arguments(arguments: str, restore: Callable[[str], str]) -> str:
    """Restore the string values (and keys) of a tool call's JSON arguments; non-JSON text as text."""
    try:
        value = json.loads(arguments)
    except (json.JSONDecodeError, TypeError):
        return restore(arguments)

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            return restore(v)
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, dict):
            return {walk(k): walk(x) for k, x in v.items()}
        return v

    new = walk(value)
    return arguments if new == value else json.dumps(new, ensure_ascii=False)


def restore_completion(data: Dict[str, Any], prepared: Prepared) -> Tuple[Dict[str, Any], int]:
    """Restore a (non-streamed) chat completion in place: contents and tool-call arguments.
    Returns the data and the number of fields changed."""
    changed = 0
    for choice in data.get("choices") or []:
        msg = choice.get("message") or {}
        for key in ("content", "reasoning_content", "refusal"):
            if isinstance(msg.get(key), str):
                new = prepared.restore(msg[key])
                changed += new != msg[key]
                msg[key] = new
        calls = list(msg.get("tool_calls") or [])
        if isinstance(msg.get("function_call"), dict):
            calls.append({"function": msg["function_call"]})
        for call in calls:
            fn = call.get("function") or {}
            if isinstance(fn.get("arguments"), str):
                new = restore_arguments(fn["arguments"], prepared.restore)
                changed += new != fn["arguments"]
                fn["arguments"] = new
    return data, changed
