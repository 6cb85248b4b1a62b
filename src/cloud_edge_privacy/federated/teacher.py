"""The distillation teacher: the project's cloud LLM lists the identifiers in a PUBLIC passage.

The teacher only ever sees public proxy text (ECHR judgments outside the clients' and dev documents, see
:mod:`.distill`); it never sees client data, so nothing here touches the DP accounting of client releases.

* :func:`teacher_messages` is the prompt: a system line, one worked example (a made-up sentence written for
  this prompt) and the passage; the model answers with a JSON list of ``{"text", "type"}``.
* :func:`parse_teacher_answer` reads that answer; anything that is not a complete JSON list of strings or
  objects with a string ``text`` is *malformed*: the passage then gets no labels at all (it is left out of
  distillation, not labelled "no identifiers"), never an exception.
* :func:`map_items_to_tokens` maps the returned strings back onto the passage's tokens (every occurrence,
  case-insensitive, whitespace-tolerant); strings not in the passage (hallucinations) and strings longer
  than ``max_item_tokens`` tokens (sentences, not identifiers) are dropped and counted.
* :class:`TeacherLabeller` asks the endpoint named by ``$CEP_CLOUD_BASE_URL``/``$CEP_CLOUD_MODEL``/
  ``$CEP_CLOUD_API_KEY`` (unset: the local llama.cpp server, started only if some passage is not cached)
  through the project's HTTP cloud client, so every attempt is audited before it is sent. Answers are cached
  on disk under ``$CEP_CACHE_DIR/kd_teacher_cache`` keyed by endpoint kind, model, the full prompt (which
  holds the passage) and the generation parameters; a re-run of the grid needs no LLM.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..datasets.tab import ENTITY_TYPES
from ..vocabulary import tolerant_body
from .model import LABELS, tokenize

PROMPT_VERSION = "kd-teacher-v1"
SYSTEM_PROMPT = "You find personal identifiers in legal text. Answer with a JSON list only."
INSTRUCTION = ("List the personal identifiers and quasi-identifiers in the passage: names of people, places, "
               "organisations, dates, case or application numbers, ages, nationalities, jobs, amounts. "
               "Copy each one exactly as written (a few words at most). JSON list of "
               '{"text": ..., "type": PERSON|CODE|LOC|ORG|DATETIME|DEM|QUANTITY|MISC}; [] if none.\n\nPassage:\n')
# A made-up example (no real person, not from any data set) that shows the expected format.
EXAMPLE_PASSAGE = ("On 3 May 2001 Ms Jane Doe, a Danish nurse born in 1960, was arrested in Aarhus (case no. 12/345) "
                   "and fined EUR 500 by the City Court.")
EXAMPLE_ANSWER = json.dumps([
    {"text": "3 May 2001", "type": "DATETIME"}, {"text": "Jane Doe", "type": "PERSON"},
    {"text": "Danish", "type": "DEM"}, {"text": "nurse", "type": "DEM"}, {"text": "1960", "type": "DATETIME"},
    {"text": "Aarhus", "type": "LOC"}, {"text": "12/345", "type": "CODE"}, {"text": "EUR 500", "type": "QUANTITY"},
    {"text": "City Court", "type": "ORG"}])
_TEXT_KEYS = ("text", "value", "span", "entity", "identifier")
_TYPE_KEYS = ("type", "label", "category", "entity_type")
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


def teacher_messages(passage: str) -> List[Dict[str, str]]:
    """The chat messages sent for one passage (the passage is public proxy text)."""
    return [{"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": INSTRUCTION + EXAMPLE_PASSAGE},
            {"role": "assistant", "content": EXAMPLE_ANSWER},
            {"role": "user", "content": INSTRUCTION + passage}]


def parse_teacher_answer(answer: Any) -> Optional[List[Tuple[str, str]]]:
    """``[(text, type)]`` from the LLM's answer, or ``None`` when it is malformed.

    Accepted: a JSON list (optionally inside a ```json fence, or after some chatter) whose items are strings
    or objects with a string under ``text`` (or value/span/entity/identifier); ``{"identifiers": [...]}``
    too. An unknown or missing type becomes ``MISC``. Items with an empty text are skipped. Anything else
    (not JSON, truncated JSON, a list of numbers, ...) is malformed.
    """
    if not isinstance(answer, str):
        return None
    s = answer.strip()
    m = _FENCE.search(s)
    if m:
        s = m.group(1).strip()
    data: Any = None
    for cand in (s, s[s.find("["): s.rfind("]") + 1] if "[" in s and "]" in s else ""):
        if not cand:
            continue
        try:
            data = json.loads(cand)
            break
        except (json.JSONDecodeError, ValueError):
            continue
    if isinstance(data, dict):
        lists = [v for v in data.values() if isinstance(v, list)]
        data = lists[0] if len(lists) == 1 else None
    if not isinstance(data, list):
        return None
    out: List[Tuple[str, str]] = []
    for item in data:
        if isinstance(item, str):
            text, typ = item, "MISC"
        elif isinstance(item, dict):
            text = next((item[k] for k in _TEXT_KEYS if isinstance(item.get(k), str)), None)
            if text is None:
                return None
            typ = next((str(item[k]) for k in _TYPE_KEYS if isinstance(item.get(k), str)), "MISC")
        else:
            return None
        text = text.strip()
        typ = typ.strip().upper()
        if text:
            out.append((text, typ if typ in ENTITY_TYPES else "MISC"))
    return out


def _find_all(text: str, needle: str) -> List[Tuple[int, int]]:
    """Character spans of every whole-word occurrence of ``needle`` in ``text`` (case-insensitive, any whitespace)."""
    words = needle.split()
    if not words:
        return []
    body = tolerant_body(needle)
    # whole words only: "Smith" must not match inside "Smithson"
    pre = r"(?<!\w)" if re.match(r"\w", words[0]) else ""
    post = r"(?!\w)" if re.search(r"\w$", words[-1]) else ""
    pat = re.compile(pre + body + post, re.IGNORECASE)
    return [(m.start(), m.end()) for m in pat.finditer(text)]


@dataclass
class TokenLabels:
    """Teacher label ids per token of one passage, and what happened to the returned strings."""

    labels: np.ndarray
    n_items: int = 0
    n_mapped: int = 0
    n_not_found: int = 0
    n_too_long: int = 0
    spans: List[Tuple[int, int, str]] = field(default_factory=list)


def map_items_to_tokens(text: str, items: Sequence[Tuple[str, str]], max_item_tokens: int = 8,
                        offsets: Optional[Sequence[Tuple[int, int]]] = None) -> TokenLabels:
    """Label every token overlapping an occurrence of a returned string with its type (``O`` elsewhere).

    Later items do not overwrite tokens an earlier item already labelled.
    """
    offs = list(offsets) if offsets is not None else tokenize(text)
    labels = np.zeros(len(offs), dtype=np.int64)
    res = TokenLabels(labels=labels, n_items=len(items))
    starts = np.array([s for s, _ in offs], dtype=np.int64)
    ends = np.array([e for _, e in offs], dtype=np.int64)
    for item, typ in items:
        if len(tokenize(item)) > max_item_tokens:
            res.n_too_long += 1
            continue
        occ = _find_all(text, item)
        if not occ:
            res.n_not_found += 1
            continue
        res.n_mapped += 1
        lab = LABELS.index(typ) if typ in LABELS[1:] else LABELS.index("MISC")
        for s, e in occ:
            res.spans.append((s, e, LABELS[lab]))
            if len(offs):
                hit = (starts < e) & (ends > s) & (labels == 0)
                labels[hit] = lab
    return res


@dataclass
class TeacherResult:
    """The teacher's answer for one passage: ``status`` is ``ok`` or ``malformed`` (then no labels)."""

    passage_id: str
    status: str
    answer: str
    items: List[Tuple[str, str]]
    labels: Optional[np.ndarray]
    mapping: Dict[str, int]
    spans: List[Tuple[int, int, str]]
    cached: bool

    def to_record(self) -> Dict[str, Any]:
        return {"passage_id": self.passage_id, "status": self.status, "answer": self.answer,
                "items": [list(i) for i in self.items], "spans": [list(s) for s in self.spans],
                "mapping": self.mapping, "n_tokens_labelled": int((self.labels > 0).sum()) if self.labels is not None else None,
                "cached": self.cached}


def result_from_answer(passage_id: str, text: str, answer: str, cached: bool, max_item_tokens: int = 8) -> TeacherResult:
    """Parse and map one answer (malformed -> ``status='malformed'``, ``labels=None``)."""
    items = parse_teacher_answer(answer)
    if items is None:
        return TeacherResult(passage_id, "malformed", answer, [], None, {}, [], cached)
    tl = map_items_to_tokens(text, items, max_item_tokens)
    mapping = {"items": tl.n_items, "mapped": tl.n_mapped, "not_found": tl.n_not_found, "too_long": tl.n_too_long}
    return TeacherResult(passage_id, "ok", answer, items, tl.labels, mapping, tl.spans, cached)


@dataclass(frozen=True)
class TeacherConfig:
    """Which endpoint answers, with which generation parameters (all part of the cache key)."""

    base_url_env: str = "CEP_CLOUD_BASE_URL"
    model_env: str = "CEP_CLOUD_MODEL"
    api_key_env: str = "CEP_CLOUD_API_KEY"
    local_model: str = "qwen2.5-coder-0.5b-instruct"
    max_tokens: int = 160
    temperature: float = 0.0
    seed: int = 0
    timeout_s: float = 300.0
    max_item_tokens: int = 8

    def params(self) -> Dict[str, Any]:
        return {"max_tokens": self.max_tokens, "temperature": self.temperature, "seed": self.seed}


def teacher_cache_dir() -> Path:
    """``$CEP_CACHE_DIR/kd_teacher_cache`` (default ``~/.cache/cloud-edge-privacy/kd_teacher_cache``)."""
    from ..models.catalog import cache_dir

    return cache_dir() / "kd_teacher_cache"


class TeacherLabeller:
    """Labels passages with the cloud LLM, cache first; the LLM is contacted only for cache misses."""

    def __init__(self, cfg: Optional[TeacherConfig] = None, audit_path: Optional[Path] = None,
                 allow_llm: bool = True) -> None:
        self.cfg = cfg or TeacherConfig()
        self.audit_path = audit_path
        self.allow_llm = allow_llm
        self._client: Any = None
        self.calls: Dict[str, int] = {"cached": 0, "llm": 0}

    def _endpoint_for_key(self) -> Any:
        """The endpoint identity used in cache keys, without starting any server."""
        import os

        from ..models.cloud_client import Endpoint

        base = os.environ.get(self.cfg.base_url_env)
        if base:
            return Endpoint(base, os.environ.get(self.cfg.model_env, ""), "", "remote")
        return Endpoint("", self.cfg.local_model, "", "local-llama.cpp")

    def describe(self) -> Dict[str, Any]:
        ep = self._endpoint_for_key()
        return {"endpoint": ep.base_url if ep.kind == "remote" else ep.kind, "model": ep.model,
                "prompt_version": PROMPT_VERSION, **self.cfg.params()}

    def _cache(self) -> Any:
        from ..models.response_cache import ResponseCache

        return ResponseCache(teacher_cache_dir())

    def cache_key(self, passage: str) -> str:
        """Same key the cloud client uses for this request (endpoint kind, model, messages, parameters)."""
        from ..models.cloud_client import CloudClient

        probe = CloudClient(self._endpoint_for_key(), None, self.cfg.params())  # type: ignore[arg-type]
        return probe.cache_key(teacher_messages(passage))

    def _cloud(self) -> Any:
        if self._client is None:
            from ..audit import AuditLog
            from ..models.catalog import cache_dir
            from ..models.cloud_client import CloudClient, resolve_endpoint

            ep = resolve_endpoint(self.cfg.base_url_env, self.cfg.model_env, self.cfg.api_key_env, self.cfg.local_model)
            audit = AuditLog(self.audit_path or cache_dir() / "kd_teacher_audit.jsonl", record_content=False)
            self._client = CloudClient(ep, audit, self.cfg.params(), timeout_s=self.cfg.timeout_s, max_retries=2,
                                       cache=self._cache())
        return self._client

    def label(self, passages: Sequence[Tuple[str, str]], progress: bool = True,
              log: Optional[Callable[[str], None]] = None) -> List[TeacherResult]:
        """``[(passage_id, text)]`` -> one :class:`TeacherResult` each, in order.

        Raises :class:`~cloud_edge_privacy.errors.CloudCallError` when a passage is not cached and the LLM is
        not allowed or not reachable (a failed call is never silently turned into "no identifiers").
        """
        from ..errors import CloudCallError

        cache = self._cache()
        answers: Dict[str, Tuple[str, bool]] = {}
        missing: List[Tuple[str, str]] = []
        for pid, text in passages:
            hit = cache.get(self.cache_key(text))
            if hit is not None and isinstance(hit.get("answer"), str):
                answers[pid] = (hit["answer"], True)
            else:
                missing.append((pid, text))
        self.calls["cached"] += len(answers)
        if missing:
            if not self.allow_llm:
                raise CloudCallError(f"{len(missing)} of {len(passages)} proxy passages have no cached teacher label "
                                     f"in {teacher_cache_dir()} and the LLM is not allowed (--teacher-cache-only)")
            if log:
                log(f"teacher: {len(answers)} passages cached, asking {self.describe()['model']} for {len(missing)}")
            client = self._cloud()
            it: Any = missing
            if progress:
                from tqdm import tqdm

                it = tqdm(missing, desc="teacher labels", unit="passage")
            for pid, text in it:
                out = client.chat(teacher_messages(text), {"sample_id": pid, "route": "cloud",
                                                           "privacy_method": "kd_teacher_public_text"})
                answers[pid] = (out.answer, out.cache_hit)
                self.calls["llm"] += 0 if out.cache_hit else 1
        return [result_from_answer(pid, text, *answers[pid], max_item_tokens=self.cfg.max_item_tokens)
                for pid, text in passages]
