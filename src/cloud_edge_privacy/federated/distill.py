"""Knowledge distillation on a PUBLIC proxy set (PrivateAI, Qi et al. 2026), server side.

Every ``kd_interval`` rounds the server

1. has the cloud model (the teacher, :mod:`.teacher`) label the public proxy passages (once; cached),
2. fuses the teacher's per-token class distribution with the current global model's:
   ``f = w·p_teacher + (1-w)·p_model`` with ``w = ½`` (:func:`fuse`),
3. keeps the tokens whose fused max-class confidence is ``>= μ`` (0.9) with the fused arg-max as label
   (:func:`confident_targets`), and
4. trains the global model on them (:func:`kd_step`).

Privacy: the proxy set is public text (ECHR judgments whose cases are neither the clients' nor dev's, and
that share no 12-token sequence with them, :func:`proxy_passages`); the teacher sees only that text. The KD
step reads the global model (a function of the clients' DP releases) and public data only, so it is
post-processing: it costs no privacy budget and does not change the accounting of the clients' releases.

The teacher answers with strings, so ``p_teacher`` is one-hot. With ``w = ½`` and ``μ = 0.9`` a token is then
kept exactly when the global model gives the teacher's class probability ``>= 0.8``: distillation sharpens
what the model and the teacher already agree on; it cannot teach a token they disagree on.
"""
from __future__ import annotations

import json
import logging
import re
import statistics
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

import numpy as np
import torch

from ..datasets.tab import Mention, TabDocument
from .model import (LABELS, ModelConfig, TokenTagger, Windows, featurize, get_flat, gold_labels, new_model, set_flat,
                    tokenize, train_epochs, window_arrays)
from .teacher import TeacherResult

_NGRAM = 12
_WORD = re.compile(r"\w+")


# --- passages -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Passage:
    """A contiguous piece ``text[start:end]`` of a source document."""

    pid: str
    source: str
    start: int
    end: int
    text: str


def chunk_spans(text: str, max_tokens: int = 100) -> List[Tuple[int, int]]:
    """Character spans of consecutive chunks of whole lines with at most ``max_tokens`` tokens each.

    A line longer than ``max_tokens`` is cut at token boundaries. Leading/trailing whitespace is excluded.
    """
    spans: List[Tuple[int, int]] = []
    cur: Optional[List[int]] = None  # [start, end, n_tokens]
    for m in re.finditer(r"[^\n]+", text):
        offs = [(m.start() + s, m.start() + e) for s, e in tokenize(m.group(0))]
        if not offs:
            continue
        for i in range(0, len(offs), max_tokens):
            part = offs[i:i + max_tokens]
            n = len(part)
            if cur is not None and cur[2] + n <= max_tokens and i == 0:
                cur[1], cur[2] = part[-1][1], cur[2] + n
                continue
            if cur is not None:
                spans.append((cur[0], cur[1]))
            cur = [part[0][0], part[-1][1], n]
    if cur is not None:
        spans.append((cur[0], cur[1]))
    return spans


def _ngrams(text: str, n: int = _NGRAM) -> Set[Tuple[str, ...]]:
    w = [t.lower() for t in _WORD.findall(text)]
    return {tuple(w[i:i + n]) for i in range(len(w) - n + 1)}


def load_background(path: str) -> Dict[str, str]:
    """``{doc_id: text}`` from ``background_knowledge.json``; errors name the file and key."""
    from ..errors import DataValidationError

    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as exc:
        raise DataValidationError(f"{path}: cannot read the public proxy text ({exc.strerror})") from None
    except json.JSONDecodeError as exc:
        raise DataValidationError(f"{path}: not valid JSON (line {exc.lineno}): {exc.msg}") from None
    if not isinstance(data, dict):
        raise DataValidationError(f"{path}: expected an object {{doc_id: text}}, got {type(data).__name__}")
    for k, v in data.items():
        if not isinstance(v, str):
            raise DataValidationError(f"{path}: key '{k}': expected a text string, got {type(v).__name__}")
    return data


def proxy_passages(background: Mapping[str, str], private_docs: Sequence[TabDocument], n: int, *,
                   max_tokens: int = 100, min_tokens: int = 30, seed: int = 0,
                   keyword: str = "applicant") -> Tuple[List[Passage], Dict[str, Any]]:
    """``n`` public passages, one per case, disjoint from ``private_docs`` (clients' and dev documents).

    A case is skipped when its ``doc_id`` is one of ``private_docs``; a passage is skipped when it shares any
    12-token sequence with their texts. From each remaining case (in a seeded order) one chunk of
    ``min_tokens``-``max_tokens`` tokens that mentions ``keyword`` is drawn, the first (header) chunk
    excluded; the choice uses the public text only. Returns the passages and a record of what was excluded.
    """
    private_ids = {d.doc_id for d in private_docs}
    forbidden: Set[Tuple[str, ...]] = set()
    for d in private_docs:
        forbidden |= _ngrams(d.text)
    rng = np.random.default_rng([seed, 4242])
    ids = sorted(k for k in background if k not in private_ids)
    order = [ids[i] for i in rng.permutation(len(ids))]
    out: List[Passage] = []
    overlap_skipped = 0
    for cid in order:
        if len(out) >= n:
            break
        text = background[cid]
        spans = chunk_spans(text, max_tokens)[1:]
        cands = [(s, e) for s, e in spans if len(tokenize(text[s:e])) >= min_tokens and keyword in text[s:e].lower()]
        if not cands:
            continue
        s, e = cands[int(rng.integers(len(cands)))]
        if _ngrams(text[s:e]) & forbidden:
            overlap_skipped += 1
            continue
        out.append(Passage(f"{cid}:{s}-{e}", cid, s, e, text[s:e]))
    info = {"n_passages": len(out), "n_cases_available": len(ids), "private_doc_ids_excluded": len(private_ids & set(background)),
            "skipped_for_12gram_overlap": overlap_skipped, "max_tokens": max_tokens, "keyword": keyword,
            "n_tokens": sum(len(tokenize(p.text)) for p in out)}
    return out, info


def eval_passages(docs: Sequence[TabDocument], n: int, *, max_tokens: int = 100, min_tokens: int = 30,
                  seed: int = 0) -> List[Tuple[Passage, TabDocument]]:
    """``n`` chunks of gold-annotated documents, each as a mini TAB document (mentions inside the chunk only).

    Used to score the teacher against TAB gold; these labels never train anything.
    """
    rng = np.random.default_rng([seed, 777])
    pool: List[Tuple[TabDocument, int, int]] = []
    for d in docs:
        pool += [(d, s, e) for s, e in chunk_spans(d.text, max_tokens) if len(tokenize(d.text[s:e])) >= min_tokens]
    pick = rng.permutation(len(pool))[:n].tolist()  # a prefix of one order: n = 20 is part of n = 30
    out: List[Tuple[Passage, TabDocument]] = []
    for i in pick:
        d, s, e = pool[i]
        ann: Dict[str, List[Mention]] = {}
        for a, ms in d.annotations.items():
            ann[a] = [Mention(m.entity_type, m.entity_mention_id, m.start_offset - s, m.end_offset - s, m.span_text,
                              m.identifier_type, m.entity_id, m.confidential_status)
                      for m in ms if m.start_offset >= s and m.end_offset <= e]
        pid = f"{d.doc_id}:{s}-{e}"
        out.append((Passage(pid, d.doc_id, s, e, d.text[s:e]), TabDocument(pid, d.text[s:e], ann)))
    return out


# --- the proxy set as training windows -----------------------------------------------------------------

@dataclass
class ProxySet:
    """Teacher-labelled public passages as model windows: ``x`` features, ``y`` teacher label ids (-100 = pad).

    Passages whose teacher answer was malformed are not in ``x``/``y`` (they have no labels).
    """

    passages: List[Passage]
    results: List[TeacherResult]
    x: torch.Tensor
    y: torch.Tensor
    info: Dict[str, Any] = field(default_factory=dict)

    @property
    def windows(self) -> Windows:
        return Windows(self.x, self.y, ["proxy"] * int(self.x.shape[0]))

    def __getstate__(self) -> Dict[str, Any]:
        # plain arrays across processes (no torch shared-memory handles)
        return {**self.__dict__, "x": self.x.numpy(), "y": self.y.numpy()}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        state = dict(state)
        state["x"], state["y"] = torch.as_tensor(state["x"]), torch.as_tensor(state["y"])
        self.__dict__.update(state)

    def __len__(self) -> int:
        return int(self.x.shape[0])


def build_proxy_set(passages: Sequence[Passage], results: Sequence[TeacherResult], cfg: ModelConfig,
                    info: Optional[Dict[str, Any]] = None) -> ProxySet:
    """Windows of the passages the teacher labelled (``status == 'ok'``)."""
    if len(passages) != len(results):
        raise ValueError(f"{len(passages)} passages but {len(results)} teacher results")
    feats, labs = [], []
    for p, r in zip(passages, results):
        if r.passage_id != p.pid:
            raise ValueError(f"teacher result '{r.passage_id}' does not belong to passage '{p.pid}'")
        if r.status != "ok" or r.labels is None:
            continue
        offs = tokenize(p.text)
        feats.append(featurize(p.text, offs, cfg))
        labs.append(r.labels)
    x, y = window_arrays(feats, labs, cfg)
    return ProxySet(list(passages), list(results), x, y, dict(info or {}))


def load_teacher_record(path: str, background: Mapping[str, str],
                        max_item_tokens: int = 8) -> Tuple[List[Passage], List[TeacherResult], Dict[str, Any]]:
    """Passages and teacher results from a saved ``teacher_labels.json`` (no LLM, no cache needed).

    Each passage is cut again from the public ``background`` text at its recorded offsets, and the recorded
    raw answer is parsed and mapped again, so the record cannot smuggle labels for other text.
    """
    from ..errors import DataValidationError
    from .teacher import result_from_answer

    try:
        with open(path, encoding="utf-8") as fh:
            blob = json.load(fh)
        passages_raw, records = blob["passages"], blob["records"]
    except OSError as exc:
        raise DataValidationError(f"{path}: cannot read the teacher labels ({exc.strerror})") from None
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise DataValidationError(f"{path}: not a teacher_labels.json record (needs 'passages' and 'records'): {exc}") from None
    if len(passages_raw) != len(records):
        raise DataValidationError(f"{path}: {len(passages_raw)} passages but {len(records)} records")
    passages: List[Passage] = []
    results: List[TeacherResult] = []
    for i, (p, r) in enumerate(zip(passages_raw, records)):
        src = p.get("source")
        if src not in background:
            raise DataValidationError(f"{path}: passages[{i}]: source '{src}' is not in the public background text")
        text = background[src][int(p["start"]):int(p["end"])]
        if r.get("passage_id") != p.get("pid"):
            raise DataValidationError(f"{path}: records[{i}]: passage_id '{r.get('passage_id')}' != pid '{p.get('pid')}'")
        passages.append(Passage(str(p["pid"]), str(src), int(p["start"]), int(p["end"]), text))
        results.append(result_from_answer(str(p["pid"]), text, str(r.get("answer", "")), cached=True,
                                          max_item_tokens=max_item_tokens))
    return passages, results, dict(blob.get("proxy") or {}, source_file=path)


def teacher_summary(results: Sequence[TeacherResult]) -> Dict[str, Any]:
    """How many passages parsed, how many strings mapped, how many tokens the teacher labels."""
    ok = [r for r in results if r.status == "ok"]
    tot_tok = sum(len(r.labels) for r in ok if r.labels is not None)
    lab_tok = sum(int((r.labels > 0).sum()) for r in ok if r.labels is not None)
    types: Dict[str, int] = {}
    for r in ok:
        for lab in r.labels[r.labels > 0] if r.labels is not None else []:
            types[LABELS[int(lab)]] = types.get(LABELS[int(lab)], 0) + 1
    agg = {k: sum(r.mapping.get(k, 0) for r in ok) for k in ("items", "mapped", "not_found", "too_long")}
    return {"passages": len(results), "parsed": len(ok), "malformed": len(results) - len(ok),
            "tokens": tot_tok, "tokens_labelled": lab_tok, "share_labelled": round(lab_tok / tot_tok, 4) if tot_tok else 0.0,
            "items": agg, "labelled_tokens_by_type": dict(sorted(types.items())),
            "items_per_passage_mean": round(statistics.mean(r.mapping.get("items", 0) for r in ok), 2) if ok else 0.0}


# --- fusion, confidence filter, KD step ---------------------------------------------------------------------

def one_hot(label_ids: torch.Tensor, n_classes: int = len(LABELS)) -> torch.Tensor:
    """``(…, C)`` one-hot of label ids; padding (-100) rows are all zero."""
    out = torch.zeros(*label_ids.shape, n_classes)
    valid = label_ids >= 0
    out[valid] = torch.nn.functional.one_hot(label_ids[valid], n_classes).float()
    return out


def fuse(model_probs: torch.Tensor, teacher_probs: torch.Tensor, teacher_weight: float = 0.5) -> torch.Tensor:
    """Per-token class distribution ``w·p_teacher + (1-w)·p_model``."""
    if model_probs.shape != teacher_probs.shape:
        raise ValueError(f"model {tuple(model_probs.shape)} and teacher {tuple(teacher_probs.shape)} probabilities differ in shape")
    if not 0.0 <= teacher_weight <= 1.0:
        raise ValueError(f"teacher_weight must be in [0, 1], got {teacher_weight}")
    return teacher_weight * teacher_probs + (1.0 - teacher_weight) * model_probs


def confident_targets(fused: torch.Tensor, mu: float, valid: torch.Tensor) -> torch.Tensor:
    """Arg-max label where the fused max-class probability is ``>= mu`` (and the token is valid), else -100."""
    conf, lab = fused.max(-1)
    keep = (conf >= mu) & valid
    return torch.where(keep, lab, torch.full_like(lab, -100))


@dataclass(frozen=True)
class KDConfig:
    """Distillation settings: every ``interval`` rounds, ``epochs`` of server-side training at ``lr``."""

    interval: int = 2
    mu: float = 0.9
    teacher_weight: float = 0.5
    epochs: int = 1
    lr: float = 3e-3
    batch_size: int = 16


@torch.no_grad()
def model_probs(model: TokenTagger, x: torch.Tensor, batch_size: int = 64) -> torch.Tensor:
    """Softmax class probabilities ``(n, W, C)`` of the model on feature windows."""
    model.eval()
    out = [torch.softmax(model(x[s:s + batch_size]), -1) for s in range(0, len(x), batch_size)]
    return torch.cat(out) if out else torch.zeros((0, x.shape[1], len(LABELS)))


def kd_step(model: TokenTagger, proxy: ProxySet, kd: KDConfig, generator: torch.Generator) -> Dict[str, Any]:
    """One distillation step on the proxy set (trains ``model`` in place); returns what was kept."""
    valid = proxy.y != -100
    n_valid = int(valid.sum())
    if not len(proxy) or not n_valid:
        return {"tokens": 0, "kept": 0, "kept_entity": 0, "teacher_entity": 0, "kept_share": 0.0, "trained": False}
    fused = fuse(model_probs(model, proxy.x), one_hot(proxy.y), kd.teacher_weight)
    targets = confident_targets(fused, kd.mu, valid)
    kept = targets != -100
    stats = {"tokens": n_valid, "kept": int(kept.sum()), "kept_entity": int((kept & (targets > 0)).sum()),
             "teacher_entity": int(((proxy.y > 0) & valid).sum()),
             "kept_share": round(int(kept.sum()) / n_valid, 4), "trained": False}
    rows = kept.any(1).nonzero().flatten().tolist()
    if rows:
        data = Windows(proxy.x[rows], targets[rows], ["proxy"] * len(rows))
        stats["loss"] = round(train_epochs(model, data, epochs=kd.epochs, lr=kd.lr, batch_size=kd.batch_size,
                                           generator=generator), 4)
        stats["trained"] = True
    return stats


def distill_flat(flat: torch.Tensor, proxy: ProxySet, kd: KDConfig, cfg: ModelConfig,
                 seed: int) -> Tuple[torch.Tensor, Dict[str, Any]]:
    """One KD step on flat global weights: returns the new flat weights and the step's statistics."""
    model = new_model(cfg, 0)
    set_flat(model, flat)
    stats = kd_step(model, proxy, kd, torch.Generator().manual_seed(seed))
    return get_flat(model), stats


class ProxyDistiller:
    """Server-side distillation for the Ianvs aggregation module: the proxy set from a saved teacher record.

    ``after_round(r, weights)`` runs one KD step when ``r`` is a multiple of ``kd.interval``.
    """

    def __init__(self, teacher_labels: str, background: str, cfg: ModelConfig, kd: KDConfig, seed: int = 0) -> None:
        passages, results, info = load_teacher_record(teacher_labels, load_background(background))
        self.proxy = build_proxy_set(passages, results, cfg, info)
        self.cfg, self.kd, self.seed = cfg, kd, int(seed)
        self.history: List[Dict[str, Any]] = []

    def after_round(self, round_no: int, flat: np.ndarray) -> np.ndarray:
        if round_no % self.kd.interval:
            return flat
        new, stats = distill_flat(torch.as_tensor(np.asarray(flat), dtype=torch.float32), self.proxy, self.kd, self.cfg,
                                  self.seed * 7919 + round_no - 1)
        self.history.append(dict(stats, round=round_no))
        logging.getLogger(__name__).info("KD after round %d: kept %d of %d proxy tokens (%d entity), trained=%s",
                                         round_no, stats["kept"], stats["tokens"], stats["kept_entity"], stats["trained"])
        return new.numpy()


def train_teacher_only(model: TokenTagger, proxy: ProxySet, epochs: int, lr: float, batch_size: int,
                       generator: torch.Generator) -> float:
    """Train on the teacher's labels of the proxy set alone (no client data, no fusion, no filter)."""
    if not len(proxy):
        raise ValueError("the proxy set has no teacher-labelled passage: nothing to train the teacher-only model on")
    return train_epochs(model, proxy.windows, epochs=epochs, lr=lr, batch_size=batch_size, generator=generator)


# --- teacher quality against gold ------------------------------------------------------------------------

def score_spans_on_gold(docs: Sequence[TabDocument], masks: Mapping[str, Sequence[Sequence[int]]]) -> Dict[str, Any]:
    """PSR (entity recall over DIRECT+QUASI entities), ER_di/ER_qi, token recall and precision (TAB rules)."""
    from ..metrics.psr import psr_scores
    from .simulation import gold_view

    res = psr_scores([gold_view(d) for d in docs], [masks.get(d.doc_id, []) for d in docs], digits=4)
    res["n_passages"] = len(docs)
    return res


def gold_token_share(docs: Iterable[TabDocument]) -> float:
    """Share of tokens inside a DIRECT/QUASI gold mention (what a mark-everything tagger's precision would be)."""
    tot = lab = 0
    for d in docs:
        g = gold_labels(d, tokenize(d.text))
        tot += len(g)
        lab += int((g > 0).sum())
    return round(lab / tot, 4) if tot else 0.0
