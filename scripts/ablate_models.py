"""What each model of the ``default`` preset costs and adds: its candidates with one or more model families left
out, decided by the shipped deciders (no refit, so an estimate of the trade, not a shipped variant).

Real development prompts, 5-fold (fold K read by fold K's learned NER, encoder NER and decider): fully masked
units and non-PII words kept by the detector alone (a word is kept when one of its occurrences outside every PII
unit is left unmasked, as ``eval_user_prompts.py --gateway`` counts the sent text). TAB dev, with the committed
models: ER_qi and token precision. And each family's share of ``default``'s recognizer time on TAB dev.

    .venv/bin/python scripts/ablate_models.py [--drop encoder spacy tab_ner learned spacy+learned spacy+tab_ner]
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any, Dict, List, Sequence, Set, Tuple

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "scripts"))
from cloud_edge_privacy.detection import build_detector  # noqa: E402
from cloud_edge_privacy.detection.learned import N_FOLDS, fold_of  # noqa: E402
from cloud_edge_privacy.detection.normalize import normalize  # noqa: E402
from cloud_edge_privacy.spans import Span  # noqa: E402

MODEL_FAMILIES = ("encoder", "spacy", "tab_ner", "learned")  # source prefixes; recognizer names differ for one
RECOGNIZER_OF = {"encoder": "encoder_ner", "spacy": "spacy", "tab_ner": "tab_ner", "learned": "learned"}
_WORDS = re.compile(r"\w+")


def without(spans: Sequence[Span], families: Set[str]) -> List[Span]:
    """The candidates whose recognizer family (the source before ``:``) is not among ``families``."""
    return [s for s in spans if s.source.split(":")[0] not in families]


def words_kept(doc: Dict[str, Any], spans: Sequence[Span]) -> Tuple[int, int]:
    """(kept, total) non-PII words of ``doc``: a word outside every PII unit is kept when one of its occurrences
    outside the units is not masked (by its lower-case form, as the end-to-end measure reads the sent text)."""
    text = doc["text"]
    pii = [False] * len(text)
    for ann in doc["annotations"].values():
        for m in ann["entity_mentions"]:
            pii[m["start_offset"]:m["end_offset"]] = [True] * (m["end_offset"] - m["start_offset"])
    masked = [False] * len(text)
    for s in spans:
        masked[s.start:s.end] = [True] * (s.end - s.start)
    words = [w for w in _WORDS.finditer(text) if not any(pii[w.start():w.end()])]
    left = {w.group().lower() for w in words if not masked[w.start()]}
    return sum(1 for w in words if w.group().lower() in left), len(words)


def _candidates(det: Any, texts: Sequence[str], timings: Dict[str, float] | None = None) -> Tuple[list, list]:
    norms = [normalize(t) for t in texts]
    return norms, det.candidates_many([n.text for n in norms], timings)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--drop", nargs="+", default=["encoder", "spacy", "tab_ner", "learned", "spacy+learned",
                                                  "spacy+tab_ner"],
                    help=f"variants: model families joined by '+', from {', '.join(MODEL_FAMILIES)}")
    args = ap.parse_args()
    variants: List[Tuple[str, Set[str]]] = [("all models", set())]
    for v in args.drop:
        fams = set(v.split("+"))
        if not fams <= set(MODEL_FAMILIES):
            ap.error(f"--drop {v!r}: unknown families {sorted(fams - set(MODEL_FAMILIES))}; "
                     f"known: {', '.join(MODEL_FAMILIES)}")
        variants.append((f"without {v}", fams))

    import eval_user_prompts as E

    prompts = E.load_set("real", "test")
    cands: Dict[int, Tuple[Any, Any, List[Span]]] = {}
    for k in range(N_FOLDS):
        det = build_detector("default", **E.fold_models("default", k))
        idx = [i for i, d in enumerate(prompts) if fold_of(d["doc_id"]) == k]
        norms, found = _candidates(det, [prompts[i]["text"] for i in idx])
        for i, n, f in zip(idx, norms, found):
            cands[i] = (det, n, f)
        print(f"prompts: fold {k} read ({len(idx)} prompts)", file=sys.stderr, flush=True)
    tab = E.load_set("tab", "test")
    det = build_detector("default")
    det.concurrent = False  # each model's own time, the encoder's too (not the time waited for its thread)
    timings: Dict[str, float] = {}
    tab_norms, tab_found = _candidates(det, [d["text"] for d in tab], timings)
    print("TAB dev read", file=sys.stderr, flush=True)

    total = sum(timings.values())
    print("share of default's recognizer time on TAB dev (one pass): " + ", ".join(
        f"{f} {timings.get(RECOGNIZER_OF[f], 0.0) / total:.0%}" for f in MODEL_FAMILIES) + "\n")
    print("| variant | prompts, 5-fold: fully masked units | non-PII words kept | TAB dev: ER_qi | token precision |")
    print("|---|---|---|---|---|")
    for name, fams in variants:
        spans = [d.decide(n, without(f, fams)) for d, n, f in (cands[i] for i in range(len(prompts)))]
        kept = [words_kept(doc, s) for doc, s in zip(prompts, spans)]
        res = E.score(prompts, spans)
        tab_res = E.score(tab, [det.decide(n, without(f, fams)) for n, f in zip(tab_norms, tab_found)])
        print(f"| {name} | {res['fully_masked']:.3f} | {sum(a for a, _ in kept) / sum(b for _, b in kept):.3f} "
              f"| {tab_res['ER_qi']:.3f} | {tab_res['token_precision']:.3f} |", flush=True)


if __name__ == "__main__":
    main()
