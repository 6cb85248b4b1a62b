"""Cloud model: any OpenAI-compatible endpoint, behind the privacy gateway (which runs on the edge).

Endpoint, model name and key come from environment variables whose *names* are configured.  When the
base-URL variable is unset, a local llama.cpp server on 127.0.0.1 is started as the offline cloud.
"""
from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

from .. import decision_store
from ..errors import CloudCallError, PrivacyGatewayError
from ..gateway import PrivacyGateway
from ..hashing import stable_hash
from .catalog import cache_dir
from ..collaboration import refine_messages, sketch_messages
from .llama_edge import LlamaEdgeModel, as_sample, build_messages
from .local_server import shared_local_server
from .response_cache import ResponseCache

_AUDIT_LOCK = threading.Lock()


def audit_path() -> Path:
    """``$RESULT_SAVED_URL/cloud_audit.jsonl`` (set by Ianvs and by our runner per algorithm)."""
    base = os.environ.get("RESULT_SAVED_URL") or os.path.join("workspace", "unnamed")
    return Path(base) / "cloud_audit.jsonl"


def write_audit(entry: Dict[str, Any]) -> None:
    path = audit_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with _AUDIT_LOCK, open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry, ensure_ascii=False) + "\n")


class OpenAICloudModel:
    """Desensitize on the edge, record exactly what is sent, call the cloud, restore on the edge."""

    def __init__(self, privacy_method: str = "placeholder", seed: int = 42, max_tokens: int = 128,
                 epsilon: Optional[float] = None,
                 temperature: float = 0.0, timeout_s: float = 300.0, max_retries: int = 3,
                 base_url_env: str = "CEP_CLOUD_BASE_URL", api_key_env: str = "CEP_CLOUD_API_KEY",
                 model_env: str = "CEP_CLOUD_MODEL", local_model: str = "qwen2.5-coder-0.5b-instruct",
                 cache: bool = True, refine_model: str = "qwen2.5-coder-0.5b-instruct", **_: Any) -> None:
        self.privacy_method = privacy_method
        self.seed = int(seed)
        self.params = {"max_tokens": int(max_tokens), "temperature": float(temperature), "seed": int(seed)}
        self.timeout_s = float(timeout_s)
        self.max_retries = int(max_retries)
        self.env = {"base_url": base_url_env, "api_key": api_key_env, "model": model_env}
        self.local_model = local_model
        # An unknown method or a bad parameter fails here, when the module is built.
        self.gateway = PrivacyGateway(privacy_method, seed=self.seed, epsilon=epsilon)
        self.gateway.warm_up()
        self.epsilon = epsilon
        self.cache = ResponseCache(cache_dir() / "cloud_cache") if cache else None
        self.config_hash = stable_hash({"privacy_method": privacy_method, "epsilon": epsilon, **self.params})[:12]
        self._client = None
        self._endpoint: Optional[Dict[str, str]] = None
        self.refine_model = refine_model
        self._refiner = None

    # -- endpoint -----------------------------------------------------------------------------
    def endpoint(self) -> Dict[str, str]:
        if self._endpoint is None:
            base = os.environ.get(self.env["base_url"])
            if base:
                model = os.environ.get(self.env["model"])
                if not model:
                    raise CloudCallError(f"{self.env['base_url']} is set but {self.env['model']} (the model name) is not")
                key = os.environ.get(self.env["api_key"], "")
                self._endpoint = {"base_url": base, "model": model, "api_key": key, "kind": "remote"}
            else:
                srv = shared_local_server(self.local_model)
                self._endpoint = {"base_url": srv.base_url, "model": self.local_model, "api_key": "local",
                                  "kind": "local-llama.cpp"}
        return self._endpoint

    def client(self) -> Any:
        if self._client is None:
            from openai import OpenAI

            ep = self.endpoint()
            self._client = OpenAI(base_url=ep["base_url"], api_key=ep["api_key"] or "unset",
                                  timeout=self.timeout_s, max_retries=0)
        return self._client

    # -- call ---------------------------------------------------------------------------------
    def chat(self, messages: List[Dict[str, str]]) -> Dict[str, Any]:
        """One chat completion with cache, bounded retries and exponential backoff."""
        import openai

        ep = self.endpoint()
        key = stable_hash({"endpoint": ep["base_url"] if ep["kind"] == "remote" else ep["kind"],
                           "model": ep["model"], "messages": messages, **self.params})
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            return dict(hit, cache_hit=True)
        delay, last = 1.0, None
        for attempt in range(self.max_retries + 1):
            t0 = time.perf_counter()
            try:
                resp = self.client().chat.completions.create(model=ep["model"], messages=messages, **self.params)
            except openai.AuthenticationError as exc:
                raise CloudCallError(f"cloud rejected the API key from ${self.env['api_key']}: {exc}") from None
            except (openai.APIConnectionError, openai.APITimeoutError, openai.InternalServerError,
                    openai.RateLimitError) as exc:
                last = exc
                if attempt < self.max_retries:
                    time.sleep(delay)
                    delay *= 2
                continue
            except openai.APIStatusError as exc:
                raise CloudCallError(f"cloud at {ep['base_url']} answered HTTP {exc.status_code}: {exc}") from None
            out = {"answer": (resp.choices[0].message.content or "").strip(),
                   "prompt_tokens": resp.usage.prompt_tokens if resp.usage else 0,
                   "completion_tokens": resp.usage.completion_tokens if resp.usage else 0,
                   "call_ms": (time.perf_counter() - t0) * 1e3, "attempts": attempt + 1}
            if self.cache is not None:
                self.cache.put(key, out)
            return dict(out, cache_hit=False)
        raise CloudCallError(f"cloud at {ep['base_url']} unreachable after {self.max_retries + 1} attempts: "
                             f"{type(last).__name__}: {last}")

    def inference(self, data: Any, **kwargs: Any) -> Dict[str, Any]:
        x = as_sample(data)
        key = decision_store.sample_key(x)
        decision = decision_store.lookup(key) or {"route": "cloud", "source": "no-router-decision"}
        result: Dict[str, Any] = {
            "sample_id": x["doc_id"], "sample_key": key, "route": decision.get("route", "cloud"),
            "router": decision, "privacy_method": self.privacy_method, "answer": "", "status": "ok",
            "sent_messages": None, "masks": [], "detected_entities": [],
            "tokens": {"edge_prompt": 0, "edge_completion": 0, "cloud_prompt": 0, "cloud_completion": 0},
            "timings_ms": {},
        }
        try:
            prot = self.gateway.protect(x["text"])
        except PrivacyGatewayError as exc:
            # Fail closed: nothing leaves the edge for this sample.
            result.update(status="privacy_failure", error=str(exc))
            write_audit({"sample_id": x["doc_id"], "route": result["route"], "privacy_method": self.privacy_method,
                         "config": self.config_hash, "sent": False, "error": str(exc), "messages": None})
            return result
        collaborative = result["route"] == "collaborative"
        messages = (sketch_messages(x["instruction"], prot.text) if collaborative
                    else build_messages(x["instruction"], prot.text))
        result.update(sent_messages=messages, masks=prot.masks(),
                      detected_entities=[s.to_dict() for s in prot.spans],
                      epsilon_spent=prot.result.epsilon if prot.result is not None else None)
        result["timings_ms"].update({"detection": prot.timings_ms["detection_ms"],
                                     "desensitization": prot.timings_ms["desensitization_ms"]})
        ep = self.endpoint()
        entry = {"sample_id": x["doc_id"], "route": result["route"], "privacy_method": self.privacy_method,
                 "config": self.config_hash, "sent": True, "endpoint": ep["kind"], "model": ep["model"],
                 "messages": messages}
        try:
            out = self.chat(messages)
        except Exception as exc:
            write_audit(dict(entry, error=f"{type(exc).__name__}: {exc}"))  # it may have reached the server
            raise
        # A cache hit sent nothing now, but the same bytes left the edge when the entry was made.
        write_audit(dict(entry, cache_hit=out["cache_hit"]))
        t_restore = time.perf_counter()
        restored = prot.restore(out["answer"])  # on the edge: surrogates back to the real values
        result["timings_ms"]["restoration"] = (time.perf_counter() - t_restore) * 1e3
        if collaborative:
            # Still on the edge: the local model writes the answer from the original text + the sketch.
            refined = self.refine(x["instruction"], x["text"], restored)
            result["timings_ms"]["refinement"] = refined["generation_ms"]
            result["tokens"].update(edge_prompt=refined["prompt_tokens"], edge_completion=refined["completion_tokens"])
            result["sketch"] = restored
            restored = refined["answer"]
        result.update(answer=restored, cloud_answer=out["answer"], cloud_cache_hit=out["cache_hit"],
                      model={"cloud": ep["model"], "cloud_endpoint": ep["kind"]})
        result["tokens"].update(cloud_prompt=out["prompt_tokens"], cloud_completion=out["completion_tokens"])
        result["timings_ms"]["cloud_call"] = out["call_ms"]
        return result

    def refine(self, instruction: str, text: str, sketch: str) -> Dict[str, Any]:
        """Edge-side refinement with the local model (PRISM stage 4)."""
        if self._refiner is None:
            self._refiner = LlamaEdgeModel(model=self.refine_model, max_tokens=self.params["max_tokens"],
                                           seed=self.seed)
        self._refiner.load()
        text, _ = self._refiner._fit(f"{instruction}\n{sketch}", text)  # keep room for the sketch
        return self._refiner.chat(refine_messages(instruction, text, sketch))

    def cleanup(self) -> None:
        self._client = None
