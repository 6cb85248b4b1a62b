"""What does a logprob-based edge confidence cost with llama.cpp here?  Compares generation with and
without ``logits_all=True`` (needed for token logprobs) on the same prompts.  Prints figures.

    .venv/bin/python scripts/bench_confidence.py [--model qwen2.5-coder-0.5b-instruct] [--tokens 48]
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from cloud_edge_privacy.models.catalog import model_path  # noqa: E402
from cloud_edge_privacy.datasets.tab import load_tab, sample_tab_path  # noqa: E402

PROMPT = "Summarize the facts of this court case in three sentences.\n\nText:\n{}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", default="qwen2.5-coder-0.5b-instruct")
    ap.add_argument("--tokens", type=int, default=48)
    args = ap.parse_args()
    from llama_cpp import Llama

    path = str(model_path(args.model))
    texts = [d.text for d in load_tab(sample_tab_path())]
    for logits_all in (False, True):
        llm = Llama(model_path=path, n_ctx=2048, n_threads=2, seed=42, verbose=False, logits_all=logits_all)
        llm.create_completion("warm up", max_tokens=1)
        t0, n, conf = time.perf_counter(), 0, []
        for t in texts:
            out = llm.create_completion(PROMPT.format(t), max_tokens=args.tokens, temperature=0.0,
                                        logprobs=1 if logits_all else None)
            n += out["usage"]["completion_tokens"]
            if logits_all:
                lps = [lp for lp in out["choices"][0]["logprobs"]["token_logprobs"] if lp is not None]
                conf.append(math.exp(sum(lps) / max(1, len(lps))))
        dt = time.perf_counter() - t0
        extra = f", mean per-token probability {sum(conf) / len(conf):.3f}" if conf else ""
        print(f"logits_all={logits_all!s:5}: {n} tokens in {dt:.1f} s over {len(texts)} prompts "
              f"({n / dt:.1f} tokens/s, {dt / len(texts):.2f} s/prompt){extra}")
        del llm


if __name__ == "__main__":
    main()
