"""Fixed 5-fold split of the real development prompts (``../shared/data/prompts``), by prompt.

A prompt's fold is the first 8 hex digits of SHA-256(doc_id) modulo 5: fixed, written down here, independent
of file order, so that every script (training, evaluation) and every rerun uses the same folds.
"""
from __future__ import annotations

import hashlib
from typing import Optional, Union

N_FOLDS = 5


def fold_of(doc_id: str, n_folds: int = N_FOLDS) -> int:
    """The cross-validation fold (0..n_folds-1) of one prompt."""
    return int(hashlib.sha256(doc_id.encode("utf-8")).hexdigest()[:8], 16) % n_folds


# The value of ``--fold`` that trains without any real prompt: the cross-source models (trained on TAB, the generated
# prompts and the other corpora only), scored on every real prompt.
NO_PROMPTS = "none"


def parse_fold(value: str, n_folds: int = N_FOLDS) -> Optional[Union[int, str]]:
    """A training script's ``--fold``: ``"all"`` -> None (every prompt, the committed model), ``"0"``..``"4"`` -> the
    held-out fold, ``"none"`` -> :data:`NO_PROMPTS` (no prompt at all); anything else is a ``ValueError``."""
    if value == "all":
        return None
    if value == NO_PROMPTS:
        return NO_PROMPTS
    if value.isdigit() and 0 <= int(value) < n_folds:
        return int(value)
    raise ValueError(f"--fold must be 0..{n_folds - 1}, 'all' or '{NO_PROMPTS}' (got {value!r})")


def keeps_prompt(doc_id: str, held_out: Optional[Union[int, str]]) -> bool:
    """Whether a model trained with ``--fold held_out`` (see :func:`parse_fold`) trains on this prompt."""
    return held_out != NO_PROMPTS and (held_out is None or fold_of(doc_id) != held_out)
