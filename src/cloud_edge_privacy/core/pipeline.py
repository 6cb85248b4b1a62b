"""The edge pipeline: the one path a request takes (docs/design.md "One request").

profile (detect once) -> route (the router's decision from the run context, carrying its profile) ->
protect every outgoing field with that profile's spans -> egress guard -> audit (inside the cloud client,
before each attempt) -> cloud client -> restore -> refine (collaborative).  The Ianvs modules, our runner,
``anonymize``, the library and the proxy all call this; nothing else talks to the cloud.  A failure is the
failure of one sample: it is returned as a :class:`~.results.SampleResult` with a ``status`` and a ``reason`` that holds no raw value
(the Ianvs adapters serialise it with ``to_dict``).
"""
from __future__ import annotations

import copy
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..audit import outgoing_texts
from ..models.collaboration import sketch_messages
from .context import RunContext, sample_key
from .egress import check_egress, independent_detector, repair_spans
from ..desensitization.base import operator_spec
from ..errors import BenchmarkError, PrivacyGatewayError
from .gateway import NO_PROTECTION, PrivacyGateway, ProtectedFields
from ..models.llama_edge import build_messages, repetition_confidence
from .module_configs import CloudModelConfig
from .profiling import as_sample, private_fields, profile_sample
from ..randomness import Randomness
from ..results import NO_DECISION, CloudReply, Profile, Route, SampleResult, Stage, Status


# Rounds of repair (mask what the guard found, protect again, check again) before a request is refused.
MAX_REPAIR_ROUNDS = 3


class EgressBlocked(PrivacyGatewayError):
    """The egress guard found an identifier in what was about to leave; nothing was sent.  ``prot`` is the
    protection the guard refused (its masks still say what detection found)."""

    def __init__(self, message: str, prot: Optional[ProtectedFields] = None) -> None:
        super().__init__(message)
        self.prot = prot


def randomness_for(config: CloudModelConfig) -> Randomness:
    if config.randomness == "benchmark":
        return Randomness.benchmark(config.seed)
    return Randomness.deployment()


def build_accountant(config: CloudModelConfig) -> Any:
    """Per-document and per-session budgets, one limit per kind of ε (None: no limit beyond the operator's own)."""
    if config.budget_per_document is None and config.budget_per_session is None:
        return None
    from ..desensitization.accountant import Budget, PrivacyAccountant

    def budget(b: Any) -> Any:
        if b is None:
            return None
        return Budget(pure=b.pure, approximate=(b.approximate, b.delta) if b.approximate is not None else None,
                      metric=b.metric)

    return PrivacyAccountant(per_document=budget(config.budget_per_document),
                             per_session=budget(config.budget_per_session))


def safe_reason(exc: BaseException) -> str:
    """An error description without raw values: our own errors are written not to hold any; for others
    only the exception type is kept."""
    if isinstance(exc, BenchmarkError):
        return f"{type(exc).__name__}: {exc}"
    return f"{type(exc).__name__} (message withheld: it may quote private input)"


def _learned_paths(detector: Any) -> Tuple[Optional[str], Optional[str]]:
    """The model folders of the learned NER a detector reads: its model, when it is not the default one (None
    otherwise), and the model of its sentences not in English (None: it has none)."""
    from ..detection.learned.ner import MODEL_DIR

    for rec in getattr(detector, "recognizers", ()):
        rec = getattr(rec, "inner", rec)  # a sentence gate
        path = getattr(rec, "path", None)
        if type(rec).__name__ == "LearnedNerRecognizer" and path:
            return (str(path) if Path(path) != MODEL_DIR else None), getattr(rec, "other_path", None)
    return None, None


class EdgePipeline:
    """Protects and sends one sample's request to the cloud, then restores and refines the answer."""

    def __init__(self, ctx: RunContext, config: CloudModelConfig, randomness: Optional[Randomness] = None,
                 guard_detector: str = "structured", detector: Any = None) -> None:
        """``randomness`` overrides the one the config names (the proxy passes a deployment randomness whose
        secret key is required, so pseudonyms stay the same across requests and processes); ``detector``
        overrides the config's preset with an already built detector (``anonymize`` and the scripts)."""
        self.ctx = ctx
        self.config = config
        self.randomness = randomness or randomness_for(config)
        self.detector = detector if detector is not None else ctx.detector(config.detector)
        self.structured = ctx.detector(guard_detector) if config.privacy_method != NO_PROTECTION else None
        self.gateway = PrivacyGateway(config.privacy_method, self.randomness, self.detector,
                                      build_accountant(config), config.operator_params())
        # the guard's rule 4 recognizers: the name lists and the learned NER the detector reads (the default preset's
        # or the multilingual one's, and the model of its sentences not in English), egress.independent_detector
        self.independent: Any = independent_detector(*_learned_paths(self.detector))
        # declared by the operator's spec (a DP release may equal the true value: the guard does not compare)
        self.randomized_release = (config.privacy_method != NO_PROTECTION
                                   and operator_spec(config.privacy_method).randomized_release)
        self._client = None
        self._refiner = None

    # -- parts ------------------------------------------------------------------------------------
    def warm_up(self) -> None:
        """Load every model the privacy path reads (the gateway's detector and the egress guard's own
        recognizers) before the first sample, so that no sample's timings include a cold start."""
        self.gateway.warm_up()
        if self.gateway.operator is not None:  # the unprotected baseline runs no guard
            self.independent.analyze("Warm-up: Ms Anna Berg wrote to mr john smith in Oslo.")

    def client(self) -> Any:
        if self._client is None:
            from ..models.catalog import cache_dir
            from ..models.cloud_client import CloudClient, resolve_endpoint
            from ..models.response_cache import ResponseCache

            c = self.config
            ep = resolve_endpoint(c.base_url_env, c.model_env, c.api_key_env, c.local_model)
            self._client = CloudClient(ep, self.ctx.audit,
                                       {"max_tokens": c.max_tokens, "temperature": c.temperature, "seed": c.seed},
                                       c.timeout_s, c.max_retries,
                                       cache=ResponseCache(cache_dir() / "cloud_cache") if c.cache else None)
        return self._client

    def refiner(self) -> Any:
        if self._refiner is None:
            from ..models.llama_edge import LlamaEdgeModel

            self._refiner = LlamaEdgeModel(model=self.config.refine_model, max_tokens=self.config.max_tokens,
                                           seed=self.config.seed, cache=self.config.cache)
        return self._refiner

    def protect(self, x: Dict[str, str], profile: Optional[Profile] = None) -> ProtectedFields:
        """Protect the sample's private fields (instruction and text) together, with the router's ``profile``
        of them when it has one; raises on any failure."""
        return self.gateway.protect_fields(private_fields(x), scope=x["doc_id"], profile=profile)

    def protect_messages(self, messages: List[Dict[str, Any]], scope: str = "") -> Tuple[ProtectedFields, List[Dict[str, Any]]]:
        """Protect every text-bearing part of chat messages together (string contents, text parts of list
        contents, tool-call arguments, tool results) and return the rebuilt messages; raises on failure."""
        slots: List[Tuple[int, Any]] = []  # (message index, path) of every text field
        texts: List[str] = []
        for i, m in enumerate(messages):
            content = m.get("content")
            if isinstance(content, str):
                slots.append((i, ("content",)))
                texts.append(content)
            elif isinstance(content, list):
                for j, part in enumerate(content):
                    if isinstance(part, dict) and isinstance(part.get("text"), str):
                        slots.append((i, ("content", j, "text")))
                        texts.append(part["text"])
            for j, call in enumerate(m.get("tool_calls") or []):
                args = (call.get("function") or {}).get("arguments")
                if isinstance(args, str):
                    slots.append((i, ("tool_calls", j, "function", "arguments")))
                    texts.append(args)
        prot = self.gateway.protect_fields(texts, scope=scope)
        out = copy.deepcopy(messages)
        for (i, path), new in zip(slots, prot.fields):
            node: Any = out[i]
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = new
        return prot, out

    def protect_texts(self, texts: Sequence[str], scope: str = "",
                      randomness: Optional[Randomness] = None) -> Tuple[ProtectedFields, float]:
        """Protect ``texts`` together and guard them as they will leave (every free text of a request that
        carries no template: the proxy's text slots, ``anonymize``'s documents), repairing what the guard finds
        (:meth:`protect_guarded`); returns the protected fields and the guard's time.  Raises
        ``PrivacyGatewayError`` / :class:`EgressBlocked`: nothing may leave."""
        return self.protect_guarded(texts, lambda prot: list(prot.fields), scope=scope, randomness=randomness,
                                    audit_meta={})

    def protect_guarded(self, fields: Sequence[str], outgoing: Callable[[ProtectedFields], Sequence[str]],
                        scope: str = "", randomness: Optional[Randomness] = None,
                        profile: Optional[Profile] = None,
                        audit_meta: Optional[Dict[str, Any]] = None) -> Tuple[ProtectedFields, float]:
        """Protect ``fields`` together, then guard ``outgoing(prot)`` (every text that will leave).

        When the guard finds an identifier in clear (rules 1, 3, 4), its value is masked wherever it occurs in
        the request by the same operator (:func:`~.egress.repair_spans`, :meth:`PrivacyGateway.reprotect`)
        and the result is checked again, up to ``MAX_REPAIR_ROUNDS`` times; the request is refused
        (:class:`EgressBlocked`) when a finding cannot be repaired or is still there after the last round.
        The accountant is charged once, for the protection that passes.  ``prot.repairs`` counts the repaired
        values per "rule/category"; with ``audit_meta`` (not None) a repair is also written to the audit log
        (counts only, no value).  Returns the protection and the guard's time in ms."""
        prot = self.gateway.protect_fields(fields, scope=scope, randomness=randomness, profile=profile,
                                           charge=False)
        randomized = self.randomized_release
        repairs: Dict[str, int] = {}
        guard_ms = 0.0
        for round_ in range(MAX_REPAIR_ROUNDS + 1):
            t0 = time.perf_counter()
            findings = check_egress(prot, self.structured, list(outgoing(prot)), randomized_release=randomized,
                                    key=self.randomness.key,
                                    independent=self.independent)
            guard_ms += (time.perf_counter() - t0) * 1e3
            if not findings:
                break
            new = repair_spans(prot, findings) if round_ < MAX_REPAIR_ROUNDS else None
            if not new:
                raise EgressBlocked(f"egress guard blocked the request: {len(findings)} finding(s)"
                                    + (f" left after {round_} repair round(s)" if round_ else " it cannot repair")
                                    + ": " + "; ".join(f.describe() for f in findings[:5]), prot)
            for f in findings:
                key = f"{f.rule}/{f.category}"
                repairs[key] = repairs.get(key, 0) + 1
            prot = self.gateway.reprotect(prot, new, scope=scope, randomness=randomness)  # prot.spans keeps them
        self.gateway.charge(scope, prot)
        prot.repairs = repairs
        if repairs and audit_meta is not None:
            self.ctx.audit.write(dict(audit_meta, event="egress_repaired", repairs=dict(sorted(repairs.items()))))
        return prot, guard_ms

    def guard(self, prot: ProtectedFields, messages: List[Dict[str, Any]]) -> float:
        """Raise :class:`EgressBlocked` if anything identifying is in the outgoing ``messages`` (a check
        without repair; :meth:`protect_guarded` repairs); returns the time taken."""
        return self.guard_texts(prot, outgoing_texts(messages))

    def guard_texts(self, prot: ProtectedFields, texts: Sequence[str]) -> float:
        """Raise :class:`EgressBlocked` if anything identifying is in ``texts`` (every free text of the
        outgoing request); returns the time taken."""
        t0 = time.perf_counter()
        findings = check_egress(prot, self.structured, list(texts),
                                randomized_release=self.randomized_release,
                                key=self.randomness.key)
        if findings:
            raise EgressBlocked(f"egress guard blocked the request: {len(findings)} finding(s): "
                                + "; ".join(f.describe() for f in findings[:5]), prot)
        return (time.perf_counter() - t0) * 1e3

    # -- the path -------------------------------------------------------------------------------------
    def cloud(self, data: Any) -> SampleResult:
        """Run the cloud (or collaborative) route for one sample; never raises for a per-sample failure."""
        x = as_sample(data)
        key = sample_key(x)
        decision = self.ctx.decision(key) or NO_DECISION
        route = decision.route
        result = SampleResult(x["doc_id"], route, sample_key=key, router=decision,
                              privacy_method=self.config.privacy_method, randomness=self.randomness.label,
                              masks=[], detected_entities=[], epsilon_spent={})
        audit_meta = {"sample_id": x["doc_id"], "route": route.value, "privacy_method": self.config.privacy_method}
        # protect + guard: any failure here means nothing leaves
        try:
            def messages_of(p: ProtectedFields) -> List[Dict[str, Any]]:
                instruction, text = p.fields
                return (sketch_messages(instruction, text) if route == Route.COLLABORATIVE
                        else build_messages(instruction, text))

            prot, guard_ms = self.protect_guarded(private_fields(x), lambda p: outgoing_texts(messages_of(p)),
                                                  scope=x["doc_id"], profile=decision.profile,
                                                  audit_meta=audit_meta)
            messages = messages_of(prot)
        except PrivacyGatewayError as exc:
            from ..desensitization.accountant import BudgetExceededError

            status = Status.BUDGET_EXCEEDED if isinstance(exc, BudgetExceededError) else Status.PRIVACY_FAILURE
            result.fail(status, safe_reason(exc))
            self.ctx.audit.write(dict(audit_meta, event="blocked", sent=False, reason=result.reason))
            return result
        result.sent_messages, result.masks = messages, prot.masks(-1)
        result.detected_entities = [s.to_dict() for s in prot.spans]
        result.epsilon_spent = prot.epsilon_by_kind()
        result.time(Stage.DETECTION, prot.timings_ms[Stage.DETECTION.value])
        result.time(Stage.DESENSITIZATION, prot.timings_ms[Stage.DESENSITIZATION.value])
        result.time(Stage.EGRESS_GUARD, guard_ms)
        try:
            client = self.client()
            reply: CloudReply = client.chat(messages, audit_meta)
        except Exception as exc:  # noqa: BLE001 - one sample's failure is one sample's failure
            return result.fail(Status.CLOUD_FAILURE, safe_reason(exc))
        t0 = time.perf_counter()
        answer = prot.restore(reply.answer)  # on the edge: surrogates back to the real values
        result.time(Stage.RESTORATION, (time.perf_counter() - t0) * 1e3)
        refine_kind = "sketch" if route == Route.COLLABORATIVE else "draft" if self.config.edge_refinement else None
        if refine_kind:
            try:
                args = (x["instruction"], x["text"], answer)
                refined = (self.refiner().refine(*args) if refine_kind == "sketch"
                           else self.refiner().refine(*args, kind="draft"))
            except Exception as exc:  # noqa: BLE001
                result.cloud_answer = reply.answer
                return result.fail(Status.EDGE_FAILURE, safe_reason(exc))
            result.time(Stage.REFINEMENT, refined["generation_ms"])
            result.tokens.edge_prompt, result.tokens.edge_completion = (refined["prompt_tokens"],
                                                                        refined["completion_tokens"])
            if refine_kind == "sketch":
                result.sketch = answer
            else:
                result.cloud_draft = answer
            answer = refined["answer"]
        ep = client.endpoint
        result.answer, result.cloud_answer = answer, reply.answer
        result.cloud_cache_hit, result.cloud_attempts = reply.cache_hit, reply.attempts
        result.model = {"cloud": ep.model, "cloud_endpoint": ep.kind}
        result.tokens.cloud_prompt, result.tokens.cloud_completion = reply.prompt_tokens, reply.completion_tokens
        result.time(Stage.CLOUD_CALL, reply.call_ms)
        return result


def edge_inference(data: Any, llm: Any, detector: Any) -> SampleResult:
    """The edge route: profile (shared with the router through the detector's cache) and answer locally."""
    x = as_sample(data)
    prof = profile_sample(x, detector)
    result = SampleResult(x["doc_id"], Route.EDGE, sample_key=sample_key(x), input_text=x["text"],
                          profile=prof.to_dict(), model={"edge": llm.model, "edge_sha256": llm.sha256})
    result.time(Stage.PROFILING, prof.profiling_ms)
    try:
        gen = llm.generate(x["instruction"], x["text"])
    except Exception as exc:  # noqa: BLE001
        result.confidence = 0.0
        return result.fail(Status.EDGE_FAILURE, safe_reason(exc))
    result.tokens.edge_prompt, result.tokens.edge_completion = gen["prompt_tokens"], gen["completion_tokens"]
    result.time(Stage.EDGE_GENERATION, gen["generation_ms"])
    result.answer = gen["answer"]
    result.confidence = repetition_confidence(gen["answer"], gen["finish_reason"])
    result.confidence_method = "heuristic:distinct-3gram*truncation"
    result.edge_cache_hit, result.truncated_input = gen["cache_hit"], gen["truncated_input"]
    return result
