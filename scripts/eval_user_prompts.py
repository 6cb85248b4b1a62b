"""Score detector presets on prompts and court text with TAB's scorer; real prompts first.

``--set real`` (the default): the 217 real WildChat prompts of ``data/prompts/pupa_tnb_tab.json``.
Every PII unit is one DIRECT entity, so ER_di is the share of *fully masked* units (every word of every mention
inside a detected span).  A preset that uses the learned recognizer is 5-fold cross-validated: prompts of fold
K are read by the model trained without fold K (``scripts/train_learned_ner.py --fold K``; folds fixed in
``detection/learned/folds.py``), and by the encoder NER trained without fold K where the preset reads it
(``scripts/train_encoder_ner.py --fold K``).  Presets without them (Presidio, spaCy, ...) read every prompt once.
Also per PUPA category.

``--set generated``: the generated user-prompt set (``--split test``; ``dev``/``tune`` were used for tuning and
training).  ``--set tab``: TAB dev (``echr_dev.json``).

    .venv/bin/python scripts/eval_user_prompts.py --set real --detectors default,precision,fast,presidio,spacy
    .venv/bin/python scripts/eval_user_prompts.py --set real --misses default     # what the default missed
    .venv/bin/python scripts/eval_user_prompts.py --set generated --split test
    .venv/bin/python scripts/eval_user_prompts.py --set tab
    .venv/bin/python scripts/eval_user_prompts.py --set real --gateway --gateway-only \
        --detectors default,fast,presidio,spacy              # end to end: refused, leaked, kept, repairs, latency
    .venv/bin/python scripts/eval_user_prompts.py --regenerate                    # rewrite the generated files
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
from cloud_edge_privacy.datasets import require_data  # noqa: E402
from cloud_edge_privacy.detection import build_detector  # noqa: E402
from cloud_edge_privacy.detection.learned import N_FOLDS, fold_model_dir, fold_of  # noqa: E402
from cloud_edge_privacy.detection.learned.folds import NO_PROMPTS  # noqa: E402
from cloud_edge_privacy.detection.encoder_ner import fold_model_dir as encoder_fold_dir  # noqa: E402
from cloud_edge_privacy.detection.presets import uses_encoder, uses_learned  # noqa: E402
from cloud_edge_privacy.eval_sets import load_split, write_splits  # noqa: E402
from cloud_edge_privacy.lexicon import CJK_CHARACTER  # noqa: E402
from cloud_edge_privacy.metrics.tab_official import combine, mention_is_masked, score_document  # noqa: E402



def _gold(doc: Dict[str, Any]) -> Dict[str, Any]:
    return {"text": doc["text"], "annotations": {a: b["entity_mentions"] for a, b in doc["annotations"].items()}}


def _group(doc: Dict[str, Any]) -> str:
    meta = doc.get("meta") or {}
    return str(meta.get("category") or meta.get("language") or meta.get("domain") or "all")


_CASELESS = re.compile(r"[^\W\d_]")


def script_of(doc: Dict[str, Any]) -> str:
    """"Latin" when most letters of a text are Latin (or Greek), else the script most of its other letters are in
    (Han, Hangul, Kana, Cyrillic, Khmer, ...: the first word of their Unicode names)."""
    import unicodedata

    counts: Counter = Counter()
    for c in _CASELESS.findall(doc["text"]):
        name = unicodedata.name(c, "")
        word = name.split(" ")[0] if name else "OTHER"
        counts["Latin" if word in ("LATIN", "GREEK") else
               "Han" if word == "CJK" else "Kana" if word in ("HIRAGANA", "KATAKANA") else word.title()] += 1
    if not counts:
        return "Latin"
    return "Latin" if counts["Latin"] * 2 >= sum(counts.values()) else max(
        (k for k in counts if k != "Latin"), key=lambda k: counts[k])


_SPACED_WORD = re.compile(r"[^\W\d_]+")
_CJK_LETTER = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def clause_long(doc: Dict[str, Any], spans: Sequence[Any], overrun: int = 8, words: int = 0) -> int:
    """Spans that run ``overrun`` or more letters past every gold mention they overlap (a clause tagged as a name:
    "English-only models tag whole Chinese clauses as ORGANIZATION"); structured identifiers and secrets aside.
    With ``words``, only those whose letters past the mentions are also ``words`` or more words, or ``overrun``
    or more Han, Kana or Hangul characters (written without spaces): a clause, not one long false-positive noun
    ("Verwaltungsebenen")."""
    text = doc["text"]
    gold = [False] * len(text)
    for a in doc["annotations"].values():
        for m in a["entity_mentions"]:
            for i in range(m["start_offset"], m["end_offset"]):
                gold[i] = True
    n = 0
    for s in spans:
        if s.source.startswith(("structured", "secret")):
            continue
        past = "".join(c if not gold[i] else " " for i, c in enumerate(text[s.start:s.end], s.start))
        if sum(c.isalpha() for c in past) < overrun:
            continue
        if words and len(_SPACED_WORD.findall(_CJK_LETTER.sub(" ", past))) < words \
                and len(_CJK_LETTER.findall(past)) < overrun:
            continue
        n += 1
    return n


def score(docs: Sequence[Dict[str, Any]], spans_by_doc: Sequence[Sequence[Any]],
          misses: Optional[List[str]] = None) -> Dict[str, Any]:
    """TAB scores of detected spans, plus fully masked entities per group (PUPA category or domain)."""
    counts = []
    groups: Dict[str, List[int]] = defaultdict(lambda: [0, 0])
    for doc, spans in zip(docs, spans_by_doc):
        gold = _gold(doc)
        counts.append(score_document(gold, [[s.start, s.end, ""] for s in spans]))
        cov = [False] * len(doc["text"])
        for s in spans:
            for i in range(s.start, s.end):
                cov[i] = True
        by_entity: Dict[str, bool] = {}
        for ann in gold["annotations"].values():
            for m in ann:
                if m["identifier_type"] in ("DIRECT", "QUASI"):
                    ok = mention_is_masked(doc["text"], cov, m["start_offset"], m["end_offset"])
                    key = m["entity_id"]
                    by_entity[key] = by_entity.get(key, True) and ok
                    if misses is not None and not ok:
                        misses.append(f"{doc['doc_id']:<14} {m['entity_type']:<8} {m['span_text']!r}")
        g = groups[_group(doc)]
        g[0] += sum(by_entity.values())
        g[1] += len(by_entity)
    res = combine(counts)
    n_di, n_qi = res["n_entities_di"], res["n_entities_qi"]
    masked = res["ER_di"] * n_di + (res["ER_qi"] * n_qi if n_qi else 0)
    res["fully_masked"] = round(masked / (n_di + n_qi), 4) if n_di + n_qi else 0.0
    res["groups"] = {k: (a, b) for k, (a, b) in sorted(groups.items())}
    return res


def fold_models(name: str, k: Any) -> Dict[str, str]:
    """``build_detector`` arguments for fold K's models: the learned NER and decider, and the encoder NER of
    presets that read it, and the multilingual learned NER that reads its sentences not in English (each trained
    without fold K; ``k = "none"``: the cross-source models, trained without any real prompt).  The fold models in the cache are the default preset's: the multilingual preset has none
    built by the scripts (its 5-fold figures were measured when it was the default, commit b2c061c), so it is read
    out of fold only by name here, never with the default's folds."""
    if name == "multilingual":
        raise SystemExit("the multilingual preset has no fold models: score it with --no-cv (in-sample on the real "
                         "prompts) or on --set multilingual / tab, which it was not trained on")
    out = {"learned_path": str(fold_model_dir(k)), "other_languages_path": str(fold_model_dir(k, multilingual=True))}
    if uses_encoder(name):
        out["encoder_path"] = str(encoder_fold_dir(k))
    return out


def _fold_plan(cross_validate: bool, cross_source: bool) -> List[Any]:
    """Which models read the prompts: fold K's for the prompts of fold K, the cross-source ones ("none") for all,
    or the committed ones (None) for all."""
    return [NO_PROMPTS] if cross_source else list(range(N_FOLDS)) if cross_validate else [None]


def _reads(doc: Dict[str, Any], k: Any) -> bool:
    return k is None or k == NO_PROMPTS or fold_of(doc["doc_id"]) == k


def detect(name: str, docs: Sequence[Dict[str, Any]], cross_validate: bool, cross_source: bool = False,
           without_steps: Sequence[str] = ()) -> List[List[Any]]:
    """Spans per document; out-of-fold when the preset uses the learned model and ``cross_validate``; read by the
    models trained without any prompt with ``cross_source``."""
    texts = [d["text"] for d in docs]
    off = {"without_steps": tuple(without_steps)} if without_steps else {}
    if not ((cross_validate or cross_source) and uses_learned(name)):
        return build_detector(name, **off).analyze_many(texts)
    out: List[List[Any]] = [[] for _ in docs]
    for k in _fold_plan(cross_validate, cross_source):
        idx = [i for i, d in enumerate(docs) if _reads(d, k)]
        det = build_detector(name, **fold_models(name, k), **off)
        for i, spans in zip(idx, det.analyze_many([texts[i] for i in idx])):
            out[i] = spans
    return out


# A word: a run of word characters, except that each Han, Kana or Hangul character is a word of its own (a Chinese
# clause has no spaces: as one "word", masking one name in it would count the whole clause as lost).
_WORDS = re.compile(CJK_CHARACTER + r"|(?:(?!" + CJK_CHARACTER + r")\w)+")


def _norm(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip().lower()


def _whole(unit: str, sent: str) -> bool:
    """The unit in the sent text as whole words (not "mi" inside "family", "chris" inside a surrogate
    "Christopher"): a stricter reading than the reference measure's substring test, printed beside it."""
    return re.search(r"(?<!\w)" + re.escape(unit) + r"(?!\w)", sent) is not None


def gateway_e2e(name: str, docs: Sequence[Dict[str, Any]], cross_validate: bool,
                method: str = "pseudonym", cross_source: bool = False, without_steps: Sequence[str] = (),
                group_of: Callable[[Dict[str, Any]], str] = None) -> Dict[str, Any]:
    """End to end, as a library user calls it: ``Gateway(method, detector=name).protect(text)`` with the egress
    guard on (it repairs what it can, refuses the rest).  The measure of ``../shared/tools/gateway_e2e.py``:
    a prompt is refused when ``protect`` raises; a PII unit (unique, case- and space-normalised surface) leaks
    when it is in a sent text; non-PII words kept = words outside every unit that are still in the sent text.
    With ``cross_validate``, prompts of fold K are read by fold K's models (the learned NER, decider and encoder
    NER of the presets that use them, and the guard's own learned recognizers, of English and of other languages,
    for every preset); with
    ``cross_source``, every prompt by the models trained without any prompt.  ``group_of``: the groups a prompt is
    counted in besides "all" (default: its PUPA category)."""
    import os

    os.environ.setdefault("CEP_SECRET_KEY", "ab" * 32)  # as the reference tool: deployment randomness, fixed key
    from cloud_edge_privacy import Gateway
    from cloud_edge_privacy.core.egress import IndependentCheck
    from cloud_edge_privacy.errors import PrivacyGatewayError

    stats: Dict[str, Counter] = defaultdict(Counter)
    repairs: Counter = Counter()
    refusals: Counter = Counter()
    latency: List[float] = []
    group_of = group_of or _group
    off = {"without_steps": tuple(without_steps)} if without_steps else {}
    for k in _fold_plan(cross_validate, cross_source):
        gw = Gateway(method, detector=name)
        if k is not None or off:
            if uses_learned(name) or off:
                det = build_detector(name, **(fold_models(name, k) if k is not None and uses_learned(name) else {}),
                                     **off)
                gw._pipe.detector = gw._pipe.gateway._detector = det
            if k is not None:
                gw._pipe.independent = IndependentCheck(
                    str(fold_model_dir(k)), other_languages_path=str(fold_model_dir(k, multilingual=True)))
        gw._pipe.warm_up()
        gw.protect("Warm-up: Ms Anna Berg wrote to mr john smith in Oslo.")
        for d in docs:
            if not _reads(d, k):
                continue
            text = d["text"]
            ments = [m for a in d["annotations"].values() for m in a["entity_mentions"]]
            units = {_norm(m["span_text"]) for m in ments} - {""}
            pii = [False] * len(text)
            for m in ments:
                for i in range(m["start_offset"], m["end_offset"]):
                    pii[i] = True
            words = [w.group().lower() for w in _WORDS.finditer(text) if not any(pii[w.start():w.end()])]
            t0 = time.perf_counter()
            try:
                out = gw.protect(text)
            except PrivacyGatewayError as exc:
                latency.append((time.perf_counter() - t0) * 1e3)
                for g in ("all", group_of(d)):
                    stats[g].update(prompts=1, refused=1, units=len(units))
                refusals.update(set(re.findall(r"\b([a-z_]+_in_clear|identifier_kept_in_replacement)\b", str(exc)))
                                or {type(exc).__name__})
                continue
            latency.append((time.perf_counter() - t0) * 1e3)
            sent = _norm(out.text)
            kept_words = {w.lower() for w in _WORDS.findall(out.text)}
            for g in ("all", group_of(d)):
                stats[g].update(prompts=1, units=len(units), sent_units=len(units),
                                leaked=sum(1 for u in units if u in sent),
                                leaked_whole=sum(1 for u in units if _whole(u, sent)), words=len(words),
                                kept=sum(1 for w in words if w in kept_words), repaired=bool(out.repairs))
            repairs.update(out.repairs)
    lat = sorted(latency)
    return {"stats": {g: dict(c) for g, c in stats.items()}, "repairs": dict(repairs), "refusals": dict(refusals),
            "p50_ms": round(lat[len(lat) // 2], 1) if lat else None,
            "p95_ms": round(lat[int(len(lat) * 0.95)], 1) if lat else None}


def analyzer_latency(name: str, docs: Sequence[Dict[str, Any]]) -> Dict[str, float]:
    """p50/p95 of a preset's ``analyze`` alone on each prompt (a baseline for the gateway's latency)."""
    det = build_detector(name)
    det.cache_size = 0
    det.analyze("Warm-up: Ms Anna Berg wrote to mr john smith in Oslo.")
    lat = []
    for d in docs:
        t0 = time.perf_counter()
        det.analyze(d["text"])
        lat.append((time.perf_counter() - t0) * 1e3)
    lat.sort()
    return {"p50_ms": round(lat[len(lat) // 2], 1), "p95_ms": round(lat[int(len(lat) * 0.95)], 1)}


def _rate(c: Dict[str, int], num: str, den: str) -> str:
    return f"{c.get(num, 0) / c[den]:.3f}" if c.get(den) else "-"


def print_gateway(results: Dict[str, Dict[str, Any]], method: str) -> None:
    print(f"\nend to end: Gateway({method!r}, detector=...).protect(text), egress guard on (repairs, then refuses)\n")
    print("| detector | prompts refused | PII units leaked in sent prompts | (as whole words) | non-PII words kept "
          "| prompts repaired | p50 ms | p95 ms |")
    print("|---|---|---|---|---|---|---|---|")
    for name, r in results.items():
        a = r["stats"]["all"]
        print(f"| {name} | {_rate(a, 'refused', 'prompts')} ({a.get('refused', 0)}/{a['prompts']}) "
              f"| {_rate(a, 'leaked', 'sent_units')} ({a.get('leaked', 0)}/{a.get('sent_units', 0)}) "
              f"| {_rate(a, 'leaked_whole', 'sent_units')} | {_rate(a, 'kept', 'words')} | {a.get('repaired', 0)} | {r['p50_ms']} | {r['p95_ms']} |")
    for name, r in results.items():
        print(f"\n[{name}] repaired values per rule/category: "
              + (", ".join(f"{k} {v}" for k, v in sorted(r["repairs"].items())) or "none")
              + "; refusals by rule: " + (", ".join(f"{k} {v}" for k, v in sorted(r["refusals"].items())) or "none"))
    groups = sorted(g for g in next(iter(results.values()))["stats"] if g != "all")
    if groups:
        print("\nper group (PUPA category, language or script): refused / leaked in sent / non-PII words kept\n")
        print("| detector | " + " | ".join(groups) + " |\n|---|" + "---|" * len(groups))
        for name, r in results.items():
            st = r["stats"]
            print(f"| {name} | " + " | ".join(
                f"{_rate(st[g], 'refused', 'prompts')} / {_rate(st[g], 'leaked', 'sent_units')} / "
                f"{_rate(st[g], 'kept', 'words')}" for g in groups) + " |")


def load_set(which: str, split: str) -> List[Dict[str, Any]]:
    if which == "multilingual":
        return json.loads(require_data("multilingual/multilingual_dev.json").read_text(encoding="utf-8"))
    if which == "real":
        return json.loads(require_data("prompts/pupa_tnb_tab.json").read_text(encoding="utf-8"))
    if which == "tab":
        return json.loads(require_data("tab/echr_dev.json").read_text(encoding="utf-8"))
    return load_split(split)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", dest="which", default="real", choices=("real", "generated", "tab", "multilingual"))
    ap.add_argument("--cross-source", action="store_true",
                    help="read the real prompts with the models trained without any of them (train_*.py --fold none, "
                         "train_decider.py --cross-source): the figure that predicts prompts of another source")
    ap.add_argument("--by", default="category", choices=("category", "script"),
                    help="the groups of the per-group tables: PUPA category (or language), or the text's script")
    ap.add_argument("--without-steps", default="",
                    help="switch off these post-detection steps (comma-separated names of pipeline.STEPS): ablation")
    ap.add_argument("--split", default="test", choices=("dev", "test", "tune"), help="for --set generated")
    ap.add_argument("--detectors", default="default,precision,fast,legal,high_recall,presidio,spacy")
    ap.add_argument("--misses", default="", help="print every gold mention this detector missed")
    ap.add_argument("--no-cv", action="store_true", help="use the final learned model everywhere (in-sample on real)")
    ap.add_argument("--union", default="", help="also score the union of these presets (comma-separated)")
    ap.add_argument("--gateway", "--guard", dest="gateway", action="store_true",
                    help="also run every preset end to end (Gateway.protect, egress guard on): prompts refused, PII "
                         "units leaked in sent prompts, non-PII words kept, repairs per rule, latency")
    ap.add_argument("--method", default="pseudonym", help="the privacy method of --gateway")
    ap.add_argument("--gateway-only", action="store_true", help="with --gateway: skip the detection scores")
    ap.add_argument("--json", default=None, help="write the results to this file")
    ap.add_argument("--regenerate", action="store_true", help="rewrite the generated split files and exit")
    args = ap.parse_args()
    if args.regenerate:
        for p in write_splits():
            print("wrote", p)
        return
    docs = load_set(args.which, args.split)
    xs = args.cross_source
    cv = args.which == "real" and not args.no_cv and not xs
    off = tuple(n for n in args.without_steps.split(",") if n)
    grouping = script_of if args.by == "script" else _group
    if args.by == "script":
        for d in docs:
            d.setdefault("meta", {})["category"] = script_of(d)
    n_tokens = sum(len(d["text"].split()) for d in docs)
    how = ("cross-source (trained without any real prompt)" if xs else
           "5-fold cross-validated" if cv else "final (all folds)")
    print(f"set {args.which}{' ' + args.split if args.which == 'generated' else ''}: {len(docs)} texts, "
          f"{n_tokens} whitespace tokens; learned model {how}"
          + (f"; steps switched off: {', '.join(off)}" if off else "") + "\n")
    names = [n for n in args.detectors.split(",") if n]
    spans: Dict[str, List[List[Any]]] = {}
    rows = []
    if not args.gateway_only:
        for name in names:
            t0 = time.perf_counter()
            spans[name] = detect(name, docs, cv, xs, off)
            miss: Optional[List[str]] = [] if name == args.misses else None
            res = score(docs, spans[name], miss)
            res["clause_long_spans"] = sum(clause_long(d, sp) for d, sp in zip(docs, spans[name]))
            res["clause_long_3_words"] = sum(clause_long(d, sp, words=3) for d, sp in zip(docs, spans[name]))
            res["seconds"] = round(time.perf_counter() - t0, 1)
            rows.append((name, res))
            if miss:
                print(f"[{name}] missed mentions:\n  " + "\n  ".join(miss) + "\n")
        if args.union:
            parts = args.union.split(",")
            for p in parts:
                if p not in spans:
                    spans[p] = detect(p, docs, cv, xs, off)
            uni = [sum((spans[p][i] for p in parts), []) for i in range(len(docs))]
            rows.append((f"union({args.union})", score(docs, uni)))
        print("| detector | fully masked units | ER_di | ER_qi | token recall | token precision | clause-long spans "
              "(8+ letters past any mention / and 3+ words or 8+ CJK characters) | seconds |")
        print("|---|---|---|---|---|---|---|---|")
        for name, r in rows:
            print(f"| {name} | {r['fully_masked']:.3f} | {r['ER_di']:.3f} | {r['ER_qi']:.3f} | {r['token_recall']:.3f} "
                  f"| {r['token_precision']:.3f} | {r.get('clause_long_spans', '')} / {r.get('clause_long_3_words', '')} | {r.get('seconds', '')} |")
        n = rows[0][1]
        print(f"\nentities: {n['n_entities_di']} direct, {n['n_entities_qi']} quasi")
        groups = list(rows[0][1]["groups"])
        if len(groups) > 1:
            print("\nfully masked units per category (masked/total):\n")
            print("| detector | " + " | ".join(groups) + " |\n|---|" + "---|" * len(groups))
            for name, r in rows:
                print(f"| {name} | " + " | ".join(f"{r['groups'][g][0] / r['groups'][g][1]:.3f} ({r['groups'][g][0]}/"
                                                   f"{r['groups'][g][1]})" for g in groups) + " |")
    if args.gateway:
        results = {name: gateway_e2e(name, docs, cv, args.method, xs, off, grouping) for name in names}
        print_gateway(results, args.method)
        if "presidio" in names:
            pres = analyzer_latency("presidio", docs)
            print(f"\nPresidio's analyzer alone on the same prompts, same process: p50 {pres['p50_ms']} ms, "
                  f"p95 {pres['p95_ms']} ms")
            print("gateway p50 / Presidio analyzer p50 (same run; issue 49's target: at most 0.7): " + ", ".join(
                f"{n} {r['p50_ms'] / pres['p50_ms']:.2f}" for n, r in results.items() if r.get("p50_ms")))
            results["presidio_analyzer_alone"] = pres
        rows += [(f"gateway:{n}", r) for n, r in results.items()]
    if args.json:
        Path(args.json).write_text(json.dumps({n: r for n, r in rows}, indent=1))


if __name__ == "__main__":
    main()
