"""The proxy's privacy engine: the edge pipeline (one code path with the benchmark) run off the event loop.

Small requests run in worker threads, each owning one :class:`ProxyPipeline` (its own detectors and their
caches), borrowed from a queue for the length of one request, so no detector is ever used by two threads
at once.  Requests whose texts are longer than ``large_request_chars`` run in a separate worker process (the
*large lane*: its own detectors, its own interpreter, a lower CPU priority), so one large request cannot
stall the small ones; it is stopped (and the request answered 422) when it runs past
``privacy_time_budget_s``.  Texts longer than ``max_privacy_chars`` are refused (413) before any detection.

Nothing here keeps per-conversation state: pseudonyms are keyed by HMAC under the secret key (or a key
derived from it per conversation, see :func:`scope_randomness`), so re-protecting the full history of every
request gives the same surrogates every turn.
"""
from __future__ import annotations

import json
import multiprocessing
import os
import queue
import secrets
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from ..audit import AuditLog
from ..core.context import RunContext
from ..core.gateway import ProtectedFields
from ..core.module_configs import CloudModelConfig
from ..core.pipeline import EdgePipeline, EgressBlocked
from ..desensitization.base import operator_spec
from ..desensitization.restore import OnePassRestorer, Restored, StreamRestorer, link_like
from ..errors import PrivacyGatewayError
from ..randomness import Randomness
from ..results import Stage
from .request import InvalidRequest, Param, ToolDecl, build_outgoing, declared_tools
from .settings import PER_CONVERSATION, PER_KEY, PER_REQUEST, SCOPE, ProxySettings


class ProxyPipeline(EdgePipeline):
    """:class:`EdgePipeline` with the proxy's keyed randomness (the secret key is required, so the same value
    gets the same surrogate in every request) and a named egress-guard detector."""

    def __init__(self, ctx: RunContext, config: CloudModelConfig, randomness: Randomness,
                 guard_detector: str = "structured") -> None:
        super().__init__(ctx, config, randomness=randomness, guard_detector=guard_detector)


class RequestTooLarge(InvalidRequest):
    """More text than the per-request privacy size budget (a 413)."""


class PrivacyBudgetExceeded(PrivacyGatewayError):
    """Protection ran past the per-request privacy time budget and was stopped (a 422); nothing was sent."""


@dataclass
class Prepared:
    """A request that passed protection and the egress guard: what to send and how to restore answers."""

    prot: Optional[ProtectedFields]
    body: Dict[str, Any]            # the outgoing request body
    detected: Dict[str, int]        # category -> number of detected spans (no values)
    timings_ms: Dict[str, float]
    dropped: int = 0                # request keys not on the allow-list (not forwarded)
    tools: Dict[str, ToolDecl] = field(default_factory=dict)   # tool name sent -> the client's declaration
    restorer_: Optional[OnePassRestorer] = None                # set by prepare (from the operator's spec)
    lane: str = "thread"
    json_content: bool = False      # the request asked for JSON answers (response_format json_object/json_schema)

    def restorer(self) -> OnePassRestorer:
        if self.restorer_ is not None:
            return self.restorer_
        r = self.prot.result.restorer if self.prot is not None and self.prot.result is not None else None
        return r if r is not None else OnePassRestorer()

    def restore(self, text: str) -> str:
        return self.restorer().restore(text)

    def restore_report(self, text: str) -> Restored:
        return self.restorer().restore_report(text)

    def text_restorer(self) -> StreamRestorer:
        return StreamRestorer(self.restorer())

    def tool_name(self, sent: str) -> str:
        """The client's name for a tool the request declared (exactly as sent); any other name as it is."""
        decl = self.tools.get(sent)
        return decl.name if decl is not None else sent

    def restore_call(self, sent_name: str, arguments: str) -> Tuple[str, int]:
        """A tool call's arguments restored (see :func:`restore_arguments`); (text, withheld)."""
        return restore_arguments(arguments, self.restorer(), self.tools.get(sent_name))

    def restore_content(self, text: str) -> Tuple[str, int]:
        """A message content restored; (text, withheld).  A JSON answer (the request asked for one) is read
        as JSON, like tool-call arguments without a schema: nothing is restored when it holds an address
        anywhere that is not a surrogate of this request (an application may build a link from two of its
        values); otherwise its string values are restored as text (keys never)."""
        if self.json_content:
            try:
                value = _strict_json(text)
            except (ValueError, TypeError, RecursionError):
                value = None
            if isinstance(value, (dict, list)):
                return restore_json_values(text, value, self.restorer())
        r = self.restore_report(text)
        return r.text, r.withheld


def _count(restorer: OnePassRestorer, text: str) -> int:
    p = restorer.pattern()
    return len(p.findall(text)) if p is not None else 0


def _strings(v: Any) -> Iterator[str]:
    if isinstance(v, str):
        yield v
    elif isinstance(v, list):
        for x in v:
            yield from _strings(x)
    elif isinstance(v, dict):
        for k, x in v.items():
            yield str(k)
            yield from _strings(x)


_QUOTES = ".,;:!?()[]{}*_\"'`<>“”‘’«»"


def _strict_json(text: str) -> Any:
    def refuse(lit: str) -> Any:
        raise ValueError(lit)

    return json.loads(text, parse_constant=refuse)


def restore_arguments(arguments: str, restorer: OnePassRestorer, decl: Optional[ToolDecl]) -> Tuple[str, int]:
    """A tool call's JSON arguments with surrogates restored only where an agent cannot carry them away.

    Restored: string values of parameters the request declared as plain text (``type: string``, no format,
    enum, const or pattern, not named like a URL), of a tool the request declared, in valid JSON, each read
    like an answer (Markdown text nodes, tokens that are not URLs, hosts or e-mails).  A call whose
    arguments hold any URL, host, IP or e-mail anywhere that is not itself a surrogate of this request (a
    host and a query split over two arguments) is not restored at all; neither are undeclared tools,
    undeclared keys or invalid JSON.  Property names come back
    as the client declared them.  Returns (text, number of surrogates withheld)."""
    if decl is None:
        return arguments, _count(restorer, arguments)
    try:
        value = _strict_json(arguments)
    except (ValueError, TypeError, RecursionError):
        return arguments, _count(restorer, arguments)
    if not isinstance(value, dict) or _foreign_address(value, restorer):
        return arguments, _count(restorer, arguments)  # a destination the request did not give: keep it all
    withheld = [0]

    def walk(v: Any, param: Optional[Param]) -> Any:
        if param is None or param.kind == "other":
            withheld[0] += sum(_count(restorer, s) for s in _strings(v))
            return v
        if param.kind == "text":
            if isinstance(v, str):
                r = restorer.restore_report(v)
                withheld[0] += r.withheld
                return r.text
            return walk(v, None)
        if param.kind == "array":
            return [walk(x, param.items) for x in v] if isinstance(v, list) else walk(v, None)
        if isinstance(v, dict):
            out = {}
            for k, x in v.items():
                child = param.children.get(k)
                out[child.name if child is not None else k] = walk(x, child)
            return out
        return walk(v, None)

    new = walk(value, Param(decl.name, "object", decl.params))
    return (arguments if new == value else json.dumps(new, ensure_ascii=False)), withheld[0]


def restore_json_values(text: str, value: Any, restorer: OnePassRestorer) -> Tuple[str, int]:
    """Restore the string values of a parsed JSON answer (see :meth:`Prepared.restore_content`)."""
    if _foreign_address(value, restorer):
        return text, _count(restorer, text)
    withheld = [0]

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            r = restorer.restore_report(v)
            withheld[0] += r.withheld
            return r.text
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, dict):
            out = {}
            for k, x in v.items():
                withheld[0] += _count(restorer, str(k))
                out[k] = walk(x)
            return out
        return v

    new = walk(value)
    return (text if new == value else json.dumps(new, ensure_ascii=False)), withheld[0]


def _foreign_address(value: Any, restorer: OnePassRestorer) -> bool:
    """Whether a JSON value holds a URL, host, IP or e-mail anywhere that is not a surrogate of this request."""
    return any(link_like(tok) and not restorer.is_surrogate(tok.strip(_QUOTES))
               for s in _strings(value) for tok in s.split())


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
    """``prepare(body)`` (from a worker thread): allow-list, protect every text slot, guard, build the body;
    large requests go to the large lane's process."""

    def __init__(self, settings: ProxySettings, audit: Optional[AuditLog], randomness: Randomness,
                 large_lane: bool = True) -> None:
        self.settings = settings
        self.audit = audit
        self.randomness = randomness
        self.config = CloudModelConfig(privacy_method=settings.method, method_params=settings.method_params,
                                       detector=settings.detector, randomness="deployment")
        self.spec = operator_spec(settings.method)
        self._idle: "queue.Queue[ProxyPipeline]" = queue.Queue()
        for _ in range(settings.workers):
            ctx = RunContext(settings.audit_dir, _audit=audit)
            self._idle.put(ProxyPipeline(ctx, self.config, randomness, settings.guard_detector))
        # the lane threads: small requests on `workers` threads; waiting on the large lane on their own threads
        self.executor = ThreadPoolExecutor(max_workers=settings.workers, thread_name_prefix="cep-privacy")
        self.large_executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="cep-large")
        self.lane = LargeLane(settings, randomness) if large_lane and settings.large_request_chars > 0 else None
        self._given: Optional[Callable[[str], bool]] = None

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)
        self.large_executor.shutdown(wait=False, cancel_futures=True)
        if self.lane is not None:
            self.lane.close()

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

        from ..core.pipeline import safe_reason
        from ..errors import ConfigError

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

    def text_chars(self, body: Any, model: Optional[str] = None) -> int:
        """Characters of text the request asks to protect; raises :class:`~.request.InvalidRequest` (400) or
        :class:`RequestTooLarge` (413)."""
        outgoing = build_outgoing(body, self.tool_call_id, model if model is not None else self.settings.model,
                                  self.settings.max_messages)
        n = sum(len(t) for t in outgoing.texts)
        if n > self.settings.max_privacy_chars:
            raise RequestTooLarge(f"the request has {n} characters of text to protect; this proxy protects at "
                                  f"most {self.settings.max_privacy_chars} per request (max_privacy_chars)")
        return n

    def is_large(self, n_chars: int) -> bool:
        return self.lane is not None and n_chars > self.settings.large_request_chars

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
        restorer = None
        if self.spec.restores and prot.result is not None and prot.result.restorer is not None:
            restorer = prot.result.restorer  # the spec declares a OnePassRestorer
        rf = body.get("response_format") if isinstance(body, dict) else None
        json_content = isinstance(rf, dict) and rf.get("type") in ("json_object", "json_schema")
        return Prepared(prot, out, detected, timings, outgoing.dropped, declared_tools(body, out),
                        restorer or OnePassRestorer(), json_content=json_content)

    def prepare_large(self, body: Any, conversation_id: Optional[str] = None,
                      model: Optional[str] = None) -> Prepared:
        """:meth:`prepare` in the large lane's process (blocking; call from a thread)."""
        assert self.lane is not None
        prepared = self.lane.prepare(body, conversation_id, model)
        r = prepared.restorer_
        if r is not None and r.had_given_name:
            r.given_name = self.given_name()
        return prepared

    def given_name(self) -> Callable[[str], bool]:
        """The public given-name lists (restoration's foreign-full-name check) for restorers that come back
        from the large lane without them."""
        if self._given is None:
            from ..desensitization.surrogates import NameSource

            self._given = NameSource().is_given_name
        return self._given


# -- the large lane: one worker process ---------------------------------------------------------------------
def _lane_main(conn: Any, settings_json: str, rand: Tuple[str, bytes, Optional[int], bool]) -> None:
    """The large lane's process: build one engine (no lane of its own), then prepare requests until told to
    stop.  Runs at a lower CPU priority than the proxy, so small requests win when cores are scarce."""
    try:
        os.nice(10)
    except OSError:
        pass
    settings = ProxySettings.model_validate_json(settings_json).model_copy(update={"workers": 1})
    engine = PrivacyEngine(settings, None, Randomness(*rand), large_lane=False)
    conn.send(("ready", None))
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg is None:
            return
        try:
            prepared = engine.prepare(*msg)
            prepared.prot, prepared.lane = None, "process"
            conn.send(("ok", prepared))
        except InvalidRequest as exc:
            conn.send(("invalid", str(exc)))
        except EgressBlocked as exc:
            conn.send(("blocked", str(exc)))
        except PrivacyGatewayError as exc:
            conn.send(("privacy", str(exc)))
        except Exception as exc:  # noqa: BLE001 - reported without its message (it may quote input)
            conn.send(("error", type(exc).__name__))


class LargeLane:
    """One worker process for large requests, started on first use, one request at a time, stopped (and
    started again on the next use) when a request runs past the time budget."""

    def __init__(self, settings: ProxySettings, randomness: Randomness) -> None:
        self.settings = settings
        self._rand = (randomness.mode, randomness.key, randomness.seed, randomness.persistent_key)
        self._lock = threading.Lock()
        self._proc: Any = None
        self._conn: Any = None

    def _start(self) -> None:
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        self._proc = ctx.Process(target=_lane_main, args=(child, self.settings.model_dump_json(), self._rand),
                                 daemon=True, name="cep-large-lane")
        self._proc.start()
        child.close()
        self._conn = parent
        if not parent.poll(self.settings.lane_start_timeout_s):
            self._stop()
            raise PrivacyGatewayError("the large-request worker did not start in time; nothing was sent")
        kind, _ = parent.recv()
        if kind != "ready":
            self._stop()
            raise PrivacyGatewayError("the large-request worker failed to start; nothing was sent")

    def _stop(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.join(timeout=5)
        if self._conn is not None:
            self._conn.close()
        self._proc = self._conn = None

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                try:
                    self._conn.send(None)
                except OSError:
                    pass
            self._stop()

    def prepare(self, body: Any, conversation_id: Optional[str], model: Optional[str]) -> Prepared:
        with self._lock:
            if self._proc is None or not self._proc.is_alive():
                self._stop()
                self._start()
            try:
                self._conn.send((body, conversation_id, model))
                ready = self._conn.poll(self.settings.privacy_time_budget_s)
                if not ready:
                    self._stop()
                    raise PrivacyBudgetExceeded(
                        f"protecting this request took longer than the privacy time budget of "
                        f"{self.settings.privacy_time_budget_s:g} s (privacy_time_budget_s); nothing was sent")
                kind, payload = self._conn.recv()
            except (EOFError, OSError, BrokenPipeError):
                self._stop()
                raise PrivacyGatewayError("the large-request worker stopped; nothing was sent") from None
        if kind == "ok":
            return payload
        if kind == "invalid":
            raise InvalidRequest(payload)
        if kind == "blocked":
            raise EgressBlocked(payload)
        if kind == "privacy":
            raise PrivacyGatewayError(payload)
        raise PrivacyGatewayError(f"the privacy path failed in the large-request worker: {payload} "
                                  f"(message withheld: it may quote private input)")


# -- answers ---------------------------------------------------------------------------------------------------
class MalformedUpstream(ValueError):
    """The upstream answered 200 with a body that is not a chat completion; the message names the field."""


def _check_completion(data: Any) -> None:
    if not isinstance(data, dict):
        raise MalformedUpstream("the body is not a JSON object")
    choices = data.get("choices", [])
    if not isinstance(choices, list):
        raise MalformedUpstream("'choices' is not a list")
    for i, c in enumerate(choices):
        if not isinstance(c, dict):
            raise MalformedUpstream(f"choices[{i}] is not an object")
        msg = c.get("message", {})
        if msg is None:
            continue
        if not isinstance(msg, dict):
            raise MalformedUpstream(f"choices[{i}].message is not an object")
        for key in ("content", "reasoning_content", "refusal"):
            if msg.get(key) is not None and not isinstance(msg[key], str):
                raise MalformedUpstream(f"choices[{i}].message.{key} is not a string")
        calls = msg.get("tool_calls")
        if calls is not None and not isinstance(calls, list):
            raise MalformedUpstream(f"choices[{i}].message.tool_calls is not a list")
        for k, call in list(enumerate(calls or [])) + ([(-1, {"function": msg["function_call"]})]
                                                   if msg.get("function_call") is not None else []):
            where = f"choices[{i}].message.tool_calls[{k}]" if k >= 0 else f"choices[{i}].message.function_call"
            fn = call.get("function") if isinstance(call, dict) else None
            if not isinstance(fn, dict):
                raise MalformedUpstream(f"{where}.function is not an object")
            for key in ("name", "arguments"):
                if fn.get(key) is not None and not isinstance(fn[key], str):
                    raise MalformedUpstream(f"{where}.function.{key} is not a string")


def restore_completion(data: Any, prepared: Prepared) -> Tuple[Dict[str, Any], int]:
    """Restore a (non-streamed) chat completion in place: contents, tool names and arguments.  Returns the
    data and the number of surrogates withheld; raises :class:`MalformedUpstream` for a body that is not a
    chat completion."""
    _check_completion(data)
    withheld = 0
    for choice in data.get("choices") or []:
        msg = choice.get("message") or {}
        if isinstance(msg.get("content"), str):
            msg["content"], n = prepared.restore_content(msg["content"])
            withheld += n
        for key in ("reasoning_content", "refusal"):
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
                fn["arguments"], n = prepared.restore_call(sent_name, fn["arguments"])
                withheld += n
            if sent_name:
                fn["name"] = prepared.tool_name(sent_name)
    return data, withheld
