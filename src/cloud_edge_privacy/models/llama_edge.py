"""Edge model: a small local LLM through llama-cpp-python over a GGUF file."""
from __future__ import annotations

import atexit
import threading
import time
from functools import lru_cache
from typing import Any, Dict, List, Optional, Tuple

from ..hashing import stable_hash
from . import usable_cpus
from .catalog import MODELS, cache_dir, model_path
from .response_cache import ResponseCache

SYSTEM_PROMPT = "You are a careful legal assistant. Answer concisely and only from the given text."
_LLAMA_CACHE: Dict[tuple, Any] = {}
_LLAMA_LOCK = threading.Lock()


def load_llama(path: str, n_ctx: int, n_threads: int, seed: int) -> Any:
    """One ``Llama`` per (file, context, threads, seed) per process: test cases reuse it."""
    key = (path, n_ctx, n_threads, seed)
    with _LLAMA_LOCK:
        if key not in _LLAMA_CACHE:
            from llama_cpp import Llama

            if not _LLAMA_CACHE:
                atexit.register(close_all_llamas)
            _LLAMA_CACHE[key] = Llama(model_path=path, n_ctx=n_ctx, n_threads=n_threads, seed=seed, verbose=False)
        return _LLAMA_CACHE[key]


def close_all_llamas() -> None:
    """Free every process-wide ``Llama`` while the interpreter is still whole (registered with atexit).

    Left to the garbage collector at interpreter shutdown, ``Llama.__del__`` runs after the modules it needs are
    torn down and prints "Exception ignored in: <function Llama.__del__>" tracebacks (seen at the end of
    ``ianvs -f``)."""
    with _LLAMA_LOCK:
        llamas = list(_LLAMA_CACHE.values())
        _LLAMA_CACHE.clear()
    for llm in llamas:
        close = getattr(llm, "close", None)
        if close is not None:
            close()


def build_messages(instruction: str, text: str) -> List[Dict[str, str]]:
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": f"{instruction}\n\nText:\n{text}"},
    ]


def repetition_confidence(answer: str, finish_reason: Optional[str]) -> float:
    """Heuristic confidence in [0, 1]: share of distinct word 3-grams, lowered when cut off.

    Not a calibrated probability: small models that are lost tend to loop or run out of tokens.
    """
    words = answer.lower().split()
    if not words:
        return 0.0
    grams = [tuple(words[i : i + 3]) for i in range(max(1, len(words) - 2))]
    distinct = len(set(grams)) / len(grams)
    return round(distinct * (1.0 if finish_reason == "stop" else 0.7), 4)


class LlamaEdgeModel:
    """The edge LLM (llama.cpp over a GGUF file): generation only, no privacy logic."""

    def __init__(self, model: str = "qwen2.5-coder-0.5b-instruct", n_ctx: int = 4096, max_tokens: int = 128,
                 temperature: float = 0.0, seed: int = 42, n_threads: Optional[int] = None,
                 cache: bool = True) -> None:
        self.model = model
        self.path = str(model_path(model))
        self.n_ctx = int(n_ctx)
        self.max_tokens = int(max_tokens)
        self.temperature = float(temperature)
        self.seed = int(seed)
        self.n_threads = int(n_threads or usable_cpus())
        self.sha256 = MODELS[model].sha256 if model in MODELS else None
        self.cache = ResponseCache(cache_dir() / "edge_cache") if cache else None
        self._llm = None

    def load(self) -> None:
        if self._llm is None:
            self._llm = load_llama(self.path, self.n_ctx, self.n_threads, self.seed)

    def fit_text(self, text: str, reserve: str = "") -> Tuple[str, bool]:
        """Truncate ``text`` so that it, ``reserve`` (the rest of the prompt) and the answer fit the context."""
        self.load()
        budget = self.n_ctx - self.max_tokens - 64 - len(self._llm.tokenize(reserve.encode("utf-8")))
        tokens = self._llm.tokenize(text.encode("utf-8"), add_bos=False)
        if len(tokens) <= budget:
            return text, False
        keep = self._llm.detokenize(tokens[: max(0, budget - 64)]).decode("utf-8", errors="ignore")
        return keep, True

    def generate(self, instruction: str, text: str) -> Dict[str, Any]:
        """Answer ``instruction`` about ``text`` (truncated to fit the context window)."""
        text, truncated = self.fit_text(text, instruction + SYSTEM_PROMPT)
        return dict(self.chat(build_messages(instruction, text)), truncated_input=truncated)

    def refine(self, instruction: str, text: str, sketch: str, kind: str = "sketch") -> Dict[str, Any]:
        """PRISM stage 4 on the edge: the final answer from the original text and the cloud's sketch
        (``kind="draft"``: the cloud's direct answer to a noised prompt, as in PRISM's LDP baselines)."""
        from .collaboration import refine_messages

        text, truncated = self.fit_text(text, f"{instruction}\n{sketch}")
        return dict(self.chat(refine_messages(instruction, text, sketch, kind)), truncated_input=truncated)

    def chat(self, messages: List[Dict[str, str]]) -> Dict[str, Any]:
        """Run the local LLM; results are cached on disk by a stable hash of model, messages and params."""
        self.load()
        params = {"max_tokens": self.max_tokens, "temperature": self.temperature, "seed": self.seed}
        key = stable_hash({"model": self.sha256 or self.path, "messages": messages, **params})
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            return dict(hit, cache_hit=True)
        t0 = time.perf_counter()
        # Evaluate the whole prompt afresh: llama-cpp-python otherwise reuses the KV cache of the longest
        # common prefix with the previous call, which changes the float path and, now and then, a greedy
        # answer -- the answer would depend on which call came before (and so on the cache state).
        self._llm.reset()
        out = self._llm.create_chat_completion(messages=messages, **params)
        elapsed = (time.perf_counter() - t0) * 1e3
        choice = out["choices"][0]
        res = {
            "answer": (choice["message"].get("content") or "").strip(),
            "finish_reason": choice.get("finish_reason"),
            "prompt_tokens": out["usage"]["prompt_tokens"],
            "completion_tokens": out["usage"]["completion_tokens"],
            "generation_ms": elapsed,
        }
        if self.cache is not None:
            self.cache.put(key, res)
        return dict(res, cache_hit=False)

    def close(self) -> None:
        self._llm = None  # the process-wide Llama stays loaded for the next test case


@lru_cache(maxsize=8)
def local_helper_model(max_tokens: int, seed: int, model: str = "qwen2.5-coder-0.5b-instruct") -> "LlamaEdgeModel":
    """One local model per (model, max_tokens, seed) for metric-side helpers (judge, attacker)."""
    return LlamaEdgeModel(model=model, max_tokens=max_tokens, seed=seed)
