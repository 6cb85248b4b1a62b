"""The federated privacy detector: two model families over the same tokens and labels (CPU, 2 cores).

* ``hashed_cnn`` (the from-scratch baseline): a small CNN token tagger over hashed word features.
* ``minilm``: the frozen pretrained encoder all-MiniLM-L6-v2 under a small trainable head (:mod:`.encoder`),
  so that DP noise falls on about 30 k parameters instead of 0.35 M.

Tokens are ``\\w+`` runs and single non-space symbols, with character offsets. Each token is described
by four hashed features (lower-cased word, word shape, 3-char prefix and suffix); hashing needs no
vocabulary, so no client's words are ever collected into a shared vocabulary. Labels: ``O`` or the TAB
entity type of a DIRECT/QUASI gold mention covering the token. Adjacent tokens with the same predicted
type are merged into one :class:`~cloud_edge_privacy.spans.Span`.
"""
from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np
import torch
from torch import nn

from ..spans import Span
from ..datasets.tab import ENTITY_TYPES, TabDocument

LABELS: Tuple[str, ...] = ("O",) + ENTITY_TYPES
_TOKEN = re.compile(r"\w+|[^\w\s]")


@dataclass(frozen=True)
class ModelConfig:
    """Family and sizes of the tagger; part of the saved model so loading rebuilds the same network."""

    kind: str = "hashed_cnn"
    word_buckets: int = 8192
    affix_buckets: int = 2048
    shape_buckets: int = 256
    dim: int = 24
    hidden: int = 64
    window: int = 128

    def __post_init__(self) -> None:
        if self.kind not in MODEL_KINDS:
            raise ValueError(f"unknown model kind '{self.kind}' (expected one of {MODEL_KINDS})")

    def to_dict(self) -> Dict[str, object]:
        return dict(self.__dict__)

    @staticmethod
    def minilm() -> "ModelConfig":
        """The pretrained-encoder model: frozen MiniLM, shape embedding of 8, head width 48."""
        return ModelConfig(kind="minilm", shape_buckets=256, dim=8, hidden=48, window=128)


MODEL_KINDS = ("hashed_cnn", "minilm")


def tokenize(text: str) -> List[Tuple[int, int]]:
    """Character offsets of the tokens of ``text``."""
    return [(m.start(), m.end()) for m in _TOKEN.finditer(text)]


def _h(s: str, buckets: int) -> int:
    return zlib.crc32(s.encode("utf-8")) % buckets


def _shape(w: str) -> str:
    out: List[str] = []
    for ch in w[:8]:
        c = "X" if ch.isupper() else "x" if ch.islower() else "d" if ch.isdigit() else ch
        if not out or out[-1] != c:
            out.append(c)
    return "".join(out)


def featurize(text: str, offsets: Sequence[Tuple[int, int]], cfg: ModelConfig, cache: bool = True) -> np.ndarray:
    """Per-token model input: ``(n_tokens, 4)`` int64 hashed features (``hashed_cnn``) or ``(n_tokens, 385)``
    float32 shape id + MiniLM vector (``minilm``)."""
    if cfg.kind == "minilm":
        from .encoder import encoder_features

        shapes = [_h(_shape(text[s:e]), cfg.shape_buckets) for s, e in offsets]
        return encoder_features(text, offsets, np.asarray(shapes, dtype=np.int64), cfg.window, cache)
    feats = np.zeros((len(offsets), 4), dtype=np.int64)
    for i, (s, e) in enumerate(offsets):
        w = text[s:e]
        lw = w.lower()
        feats[i] = (_h(lw, cfg.word_buckets), _h(_shape(w), cfg.shape_buckets),
                    _h("p" + lw[:3], cfg.affix_buckets), _h("s" + lw[-3:], cfg.affix_buckets))
    return feats


def gold_labels(doc: TabDocument, offsets: Sequence[Tuple[int, int]]) -> np.ndarray:
    """Per-token label ids from every annotator's DIRECT/QUASI mentions (union; first annotator wins ties)."""
    labels = np.zeros(len(offsets), dtype=np.int64)
    char_lab = np.zeros(len(doc.text), dtype=np.int64)
    for annotator in reversed(list(doc.annotations)):
        for m in doc.annotations[annotator]:
            if m.is_masked_type and m.entity_type in ENTITY_TYPES:
                char_lab[m.start_offset:m.end_offset] = LABELS.index(m.entity_type)
    for i, (s, e) in enumerate(offsets):
        seg = char_lab[s:e]
        nz = seg[seg > 0]
        labels[i] = int(nz[0]) if len(nz) else 0
    return labels


@dataclass
class Windows:
    """Fixed-length windows of tokens: features ``(n, W, F)``, labels ``(n, W)`` (-100 = padding)."""

    x: torch.Tensor
    y: torch.Tensor
    doc_ids: List[str]

    def __len__(self) -> int:
        return int(self.x.shape[0])

    def subset(self, idx: Sequence[int]) -> "Windows":
        ii = torch.as_tensor(list(idx), dtype=torch.long)
        return Windows(self.x[ii], self.y[ii], [self.doc_ids[i] for i in idx])


def make_windows(docs: Iterable[TabDocument], cfg: ModelConfig, labelled: bool = True) -> Windows:
    """Cut documents into non-overlapping windows of ``cfg.window`` tokens."""
    xs: List[np.ndarray] = []
    ys: List[np.ndarray] = []
    ids: List[str] = []
    W = cfg.window
    feats, labs = [], []
    for doc in docs:
        offs = tokenize(doc.text)
        feats.append(featurize(doc.text, offs, cfg))
        labs.append(gold_labels(doc, offs) if labelled else np.zeros(len(offs), dtype=np.int64))
        ids.extend([doc.doc_id] * ((len(offs) + W - 1) // W))
    x, y = window_arrays(feats, labs, cfg)
    return Windows(x, y, ids)


def feature_width(cfg: ModelConfig) -> Tuple[int, torch.dtype]:
    """Columns and dtype of one token's features."""
    if cfg.kind == "minilm":
        from .encoder import ENCODER_DIM

        return 1 + ENCODER_DIM, torch.float32
    return 4, torch.long


def window_arrays(feats: Sequence[np.ndarray], labels: Sequence[np.ndarray], cfg: ModelConfig) -> Tuple[torch.Tensor, torch.Tensor]:
    """Cut per-text features and labels into windows of ``cfg.window`` tokens (zero features, -100 labels pad)."""
    W = cfg.window
    width, dtype = feature_width(cfg)
    np_dtype = np.float32 if dtype == torch.float32 else np.int64
    xs: List[np.ndarray] = []
    ys: List[np.ndarray] = []
    for f, lab in zip(feats, labels):
        for s in range(0, len(f), W):
            fx = np.zeros((W, width), dtype=np_dtype)
            fy = np.full(W, -100, dtype=np.int64)
            n = min(W, len(f) - s)
            fx[:n] = f[s:s + n]
            fy[:n] = lab[s:s + n]
            xs.append(fx)
            ys.append(fy)
    if not xs:
        return torch.zeros((0, W, width), dtype=dtype), torch.zeros((0, W), dtype=torch.long)
    return torch.as_tensor(np.stack(xs)), torch.as_tensor(np.stack(ys))


class TokenTagger(nn.Module):
    """Hashed-feature embeddings -> two 1-D convolutions -> per-token label logits."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.word = nn.Embedding(cfg.word_buckets, cfg.dim)
        self.shape = nn.Embedding(cfg.shape_buckets, cfg.dim)
        self.prefix = nn.Embedding(cfg.affix_buckets, cfg.dim)
        self.suffix = nn.Embedding(cfg.affix_buckets, cfg.dim)
        self.conv1 = nn.Conv1d(4 * cfg.dim, cfg.hidden, kernel_size=5, padding=2)
        self.conv2 = nn.Conv1d(cfg.hidden, cfg.hidden, kernel_size=5, padding=4, dilation=2)
        self.out = nn.Linear(cfg.hidden, len(LABELS))

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (B, W, 4)
        e = torch.cat([self.word(x[..., 0]), self.shape(x[..., 1]), self.prefix(x[..., 2]), self.suffix(x[..., 3])], -1)
        h = torch.relu(self.conv1(e.transpose(1, 2)))
        h = torch.relu(self.conv2(h)) + h
        return self.out(h.transpose(1, 2))  # (B, W, L)


def new_model(cfg: ModelConfig, seed: int) -> nn.Module:
    """A freshly initialised tagger; the same seed gives the same weights (the shared initial global model)."""
    gen_state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    try:
        if cfg.kind == "minilm":
            from .encoder import EncoderTagger

            return EncoderTagger(cfg, len(LABELS))
        return TokenTagger(cfg)
    finally:
        torch.random.set_rng_state(gen_state)


def get_flat(model: nn.Module) -> torch.Tensor:
    """All parameters as one detached float vector."""
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()]).clone()


def set_flat(model: nn.Module, flat: torch.Tensor) -> None:
    """Load a flat vector produced by :func:`get_flat` into ``model``."""
    need = sum(p.numel() for p in model.parameters())
    if flat.numel() != need:
        raise ValueError(f"parameter vector has {flat.numel()} values, the model needs {need}")
    i = 0
    with torch.no_grad():
        for p in model.parameters():
            n = p.numel()
            p.copy_(flat[i:i + n].view_as(p))
            i += n


def class_weights(device: str = "cpu") -> torch.Tensor:
    """Up-weight entity labels against the dominant ``O`` (fixed, public: not estimated from client data)."""
    w = torch.full((len(LABELS),), 3.0)
    w[0] = 1.0
    return w.to(device)


def batch_loss(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Class-weighted token cross-entropy summed per window over a fixed length, then averaged over windows.

    Each window's term depends on that window only (no batch-wide normalisation), which DP-SGD's per-sample
    clipping needs for its sensitivity bound.
    """
    ce = nn.functional.cross_entropy(logits.transpose(1, 2), y.clamp(min=0), weight=class_weights(), reduction="none")
    mask = (y != -100).float()
    return ((ce * mask).sum(1) / y.shape[1]).mean()


def train_epochs(model: nn.Module, data: Windows, *, epochs: int, lr: float, batch_size: int,
                 generator: torch.Generator) -> float:
    """Plain (non-private) local SGD with Adam; returns the mean loss of the last epoch."""
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    last = float("nan")
    for _ in range(epochs):
        perm = torch.randperm(len(data), generator=generator)
        tot, nb = 0.0, 0
        for s in range(0, len(data), batch_size):
            ii = perm[s:s + batch_size]
            opt.zero_grad()
            logits = model(data.x[ii])
            loss = batch_loss(logits, data.y[ii])
            loss.backward()
            opt.step()
            tot += float(loss.detach())
            nb += 1
        last = tot / max(nb, 1)
    return last


@torch.no_grad()
def window_losses(model: nn.Module, data: Windows, batch_size: int = 64) -> np.ndarray:
    """Mean unweighted token cross-entropy of each window (the membership-inference signal)."""
    model.eval()
    out: List[np.ndarray] = []
    for s in range(0, len(data), batch_size):
        logits = model(data.x[s:s + batch_size])
        y = data.y[s:s + batch_size]
        l = nn.functional.cross_entropy(logits.transpose(1, 2), y, ignore_index=-100, reduction="none")
        mask = (y != -100).float()
        out.append(((l * mask).sum(1) / mask.sum(1).clamp(min=1)).numpy())
    return np.concatenate(out) if out else np.zeros(0)


@torch.no_grad()
def predict_spans(model: nn.Module, text: str, threshold: float = 0.5, source: str = "federated",
                  cache: bool = True) -> List[Span]:
    """Spans of ``text`` whose tokens the tagger labels as an entity (P(not O) >= threshold); ``cache=False``
    keeps the encoder's vectors of ``text`` off the disk."""
    model.eval()
    cfg = model.cfg
    offs = tokenize(text)
    if not offs:
        return []
    f = torch.as_tensor(featurize(text, offs, cfg, cache))
    probs: List[torch.Tensor] = []
    for s in range(0, len(offs), cfg.window):
        probs.append(torch.softmax(model(f[s:s + cfg.window].unsqueeze(0))[0], -1))
    p = torch.cat(probs)
    ent = 1.0 - p[:, 0]
    lab = p[:, 1:].argmax(-1) + 1
    spans: List[Span] = []
    cur: Optional[List[float]] = None  # [start, end, label, max score]
    for i, (s, e) in enumerate(offs):
        if float(ent[i]) >= threshold:
            li = int(lab[i])
            gap = text[int(cur[1]):s] if cur is not None else ""
            if cur is not None and cur[2] == li and gap.strip() == "":
                cur[1] = e
                cur[3] = max(cur[3], float(ent[i]))
                continue
            if cur is not None:
                spans.append(Span(int(cur[0]), int(cur[1]), LABELS[int(cur[2])], round(cur[3], 4), source))
            cur = [s, e, li, float(ent[i])]
        elif cur is not None:
            spans.append(Span(int(cur[0]), int(cur[1]), LABELS[int(cur[2])], round(cur[3], 4), source))
            cur = None
    if cur is not None:
        spans.append(Span(int(cur[0]), int(cur[1]), LABELS[int(cur[2])], round(cur[3], 4), source))
    return spans


def save_model(model: nn.Module, path: str, meta: Optional[Dict[str, object]] = None) -> None:
    """Save weights, sizes and provenance (method, ε, seed) to one file."""
    torch.save({"config": model.cfg.to_dict(), "state_dict": model.state_dict(), "meta": dict(meta or {})}, path)


def load_model(path: str) -> Tuple[nn.Module, Dict[str, object]]:
    """Load a model saved by :func:`save_model` (files from before ``kind`` existed are ``hashed_cnn``)."""
    blob = torch.load(path, map_location="cpu", weights_only=False)
    model = new_model(ModelConfig(**blob["config"]), 0)
    model.load_state_dict(blob["state_dict"])
    model.eval()
    return model, dict(blob.get("meta") or {})
