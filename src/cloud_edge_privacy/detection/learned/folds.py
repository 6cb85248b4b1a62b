"""Fixed 5-fold split of the real development prompts (``../shared/data/prompts``), by prompt.

A prompt's fold is the first 8 hex digits of SHA-256(doc_id) modulo 5: fixed, written down here, independent
of file order, so that every script (training, evaluation) and every rerun uses the same folds.
"""
from __future__ import annotations

import hashlib

N_FOLDS = 5


def fold_of(doc_id: str, n_folds: int = N_FOLDS) -> int:
    """The cross-validation fold (0..n_folds-1) of one prompt."""
    return int(hashlib.sha256(doc_id.encode("utf-8")).hexdigest()[:8], 16) % n_folds
