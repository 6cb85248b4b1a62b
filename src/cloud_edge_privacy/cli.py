"""cloud-edge-privacy: protect what leaves the edge for a cloud LLM, and benchmark it (Ianvs jobs).

Protect text:   anonymize --text "..." | anonymize < prompts.jsonl | proxy --upstream URL
Benchmark:      run -f benchmarkingjob.yaml, report, score-tab, route
Data/models:    prepare-tab, prepare-prism, data, models, serve
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any, List, Optional

from .errors import BenchmarkError
from .datasets.tab import DEFAULT_INSTRUCTION, load_tab, resolve_tab_file, write_ianvs_jsonl


def _cmd_run(args: argparse.Namespace) -> int:
    from .reporting.report import write_report
    from .bench.runner import run_job

    if _paradigm(args.config) == "federatedlearning":
        from .federated.ianvs_runner import run_federated_job

        run_federated_job(args.config, progress=not args.no_progress)
        return 0
    if sum(bool(v) for v in (args.test_data, args.sample, args.data_dir)) > 1:
        raise BenchmarkError("give at most one of --test-data, --sample and --data-dir")
    if args.test_data:
        tab_file = None
        print(f"data: {args.test_data} (--test-data)")
    elif args.sample:
        tab_file = None
        print("data: the dataset named in the testenv YAML (--sample)")
    else:
        tab_file = resolve_tab_file(args.data_dir, args.split)
        origin = "--data-dir" if args.data_dir else "$TAB_DATA_DIR"
        print(f"data: {tab_file} ({origin})" if tab_file else "data: the dataset named in the testenv YAML "
              "(as Ianvs; override with --data-dir, $TAB_DATA_DIR or --test-data)")
    t0 = time.perf_counter()
    summary = run_job(args.config, tab_file, args.limit, progress=not args.no_progress, test_data=args.test_data,
                      no_cache=args.no_cache, executor=args.executor, address=args.address, workers=args.workers,
                      shard_samples=args.shard_samples)
    report = (write_report(summary.output_dir, args.config, summary.data_file, judge=not args.no_judge)
              if summary.results else None)
    print(f"\n{len(summary.results)} test case(s) finished, "
          f"{sum(1 for f in summary.failures if 'error' in f)} failed; "
          f"{summary.samples - summary.sample_failures}/{summary.samples} samples completed, "
          f"{summary.sample_failures} failed, {summary.cache_replays} replayed from the response cache, "
          f"in {time.perf_counter() - t0:.1f} s")
    for label, n in summary.cache_replays_by_case.items():
        if n:
            print(f"  {label}: {n} answer(s) replayed from the response cache (not run now; no latency)")
    for f in summary.failures:
        if "statuses" in f:
            print(f"  {f['test_case']}: {f['failed_samples']}/{f['samples']} samples failed {f['statuses']}",
                  file=sys.stderr)
    for kind, path in summary.rank_files.items():
        print(f"{kind} rank: {path}")
    if report:
        print(f"report: {report}")
        from .reporting.report import console_board

        print(console_board(summary.output_dir, args.config))
    if args.ci is not None and summary.results:
        from .reporting.ci_check import check_job, default_expected

        ok, text = check_job(summary.output_dir, args.ci or default_expected(args.config))
        print(text)
        if not ok:
            return 1
    if summary.failures:
        print(f"failures: {os.path.join(summary.output_dir, 'failures.json')}", file=sys.stderr)
        return 1
    return 0


def _paradigm(config: str) -> str:
    """The paradigm of the job's first algorithm (dispatch between our jointinference and federated runners)."""
    from .bench.ianvs_config import load_yaml

    job = load_yaml(config, "benchmarkingjob")
    algos = ((job.get("test_object") or {}).get("algorithms") or [])
    if not algos or not isinstance(algos[0], dict) or not algos[0].get("url"):
        return "jointinference"
    return str(load_yaml(algos[0]["url"], "algorithm").get("paradigm_type", "jointinference"))


def _cmd_prepare(args: argparse.Namespace) -> int:
    src = Path(args.input)
    out = Path(args.out) / f"{src.stem}.jsonl" if not args.out.endswith(".jsonl") else Path(args.out)
    n = write_ianvs_jsonl(load_tab(src), out, args.instruction, args.limit)
    print(f"wrote {n} records to {out}")
    return 0


def _cmd_detect(args: argparse.Namespace) -> int:
    """What a detector finds in one text (--text, a file, or '-'/nothing: stdin), one span a line; with --trace,
    which post-detection step removed, added or changed which span.  The text's private values are printed: this
    is for the edge operator's terminal, nothing is logged or sent."""
    from .detection import build_detector

    if args.text is not None:
        text = args.text
    elif args.input in (None, "-"):
        text = sys.stdin.read()
    else:
        path = Path(args.input)
        if not path.is_file():
            print(f"error: --input {path}: no such file", file=sys.stderr)
            return 2
        text = path.read_text(encoding="utf-8")
    try:
        det = build_detector(args.detector, **({"without_steps": tuple(args.without_step)} if args.without_step else {}))
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    spans, trace = det.analyze_traced(text)
    for s in spans:
        print(f"{s.start}\t{s.end}\t{s.category}\t{s.source}\t{text[s.start:s.end]!r}")
    if args.trace:
        print(f"# steps run: {', '.join(det.step_names) or 'none'}")
        for line in trace.lines() or ["no step changed a span"]:
            print(f"# {line}")
    return 0


def _cmd_anonymize(args: argparse.Namespace) -> int:
    """Plain text (--text, or stdin), JSONL of {"text": ...}, or a TAB JSON file (masks for score-tab)."""
    from .core.module_configs import CloudModelConfig, validate_config

    # the same validation as the YAML's cloud module: unknown method, ε for a method without a budget,
    # non-finite or non-positive ε are errors before any model loads
    cfg = validate_config(CloudModelConfig, {"privacy_method": args.method, "epsilon": args.epsilon},
                          "anonymize options (--method/--epsilon)")
    if args.text is not None and args.input:
        raise BenchmarkError("give --text or --input, not both")
    if args.text is not None:
        return _anonymize_texts(args, [("text", args.text)], plain=True)
    if not args.input or args.input == "-":
        if sys.stdin.isatty():
            raise BenchmarkError("nothing to anonymize: give --text TEXT, --input FILE, or pipe text to stdin")
        data = sys.stdin.read()
        records = _jsonl_texts(data, "<stdin>") if _looks_like_jsonl(data) else None
        return _anonymize_texts(args, records or [("text", data)], plain=records is None)
    if args.input.endswith(".jsonl"):
        return _anonymize_texts(args, _jsonl_texts(Path(args.input).read_text(encoding="utf-8"), args.input),
                                plain=False)
    return _anonymize_tab(args, cfg)


def _looks_like_jsonl(data: str) -> bool:
    first = next((ln for ln in data.splitlines() if ln.strip()), "")
    return first.lstrip().startswith("{")


def _jsonl_texts(data: str, origin: str) -> List[tuple]:
    """``(id, text)`` per line of a JSONL of ``{"text": ...}`` (an ``id`` field is kept when present)."""
    import json as _json

    out = []
    for lineno, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = _json.loads(line)
        except ValueError as exc:
            raise BenchmarkError(f"{origin}: line {lineno}: not JSON ({exc.msg})") from None
        if not isinstance(rec, dict) or not isinstance(rec.get("text"), str):
            raise BenchmarkError(f"{origin}: line {lineno}: expected an object with a string field 'text'")
        out.append((rec.get("id", lineno), rec["text"]))
    if not out:
        raise BenchmarkError(f"{origin}: no records")
    return out


def _policy(items: List[str]) -> dict:
    out = {}
    for item in items or []:
        etype, sep, method = item.partition("=")
        if not sep or not etype or not method:
            raise BenchmarkError(f"--policy {item!r}: expected TYPE=METHOD, e.g. EMAIL=placeholder")
        out[etype.strip().upper()] = method.strip()
    return out


def _anonymize_texts(args: argparse.Namespace, records: List[tuple], plain: bool) -> int:
    """Protect texts through the library gateway (the pipeline's detector, operators and egress guard)."""
    import json as _json

    from .api import Gateway
    from .errors import PrivacyGatewayError
    from .core.pipeline import safe_reason
    from .randomness import Randomness

    rand = Randomness.benchmark(args.seed) if args.seed is not None else None
    if rand is not None:
        print(f"randomness: {rand.label}", file=sys.stderr)
    gw = Gateway(args.method, policy=_policy(args.policy), detector=args.detector, epsilon=args.epsilon,
                 randomness=rand)
    failed = 0
    out = open(args.texts_out, "w", encoding="utf-8") if args.texts_out else sys.stdout
    try:
        for rid, text in records:
            try:
                p = gw.protect(text, scope=str(rid))
            except PrivacyGatewayError as exc:   # one record's failure is one record's failure
                failed += 1
                print(f"{rid}: not released: {safe_reason(exc)}", file=sys.stderr)
                if not plain:
                    out.write(_json.dumps({"id": rid, "text": None, "status": "privacy_failure"}) + "\n")
                continue
            if plain:
                out.write(p.text + ("" if p.text.endswith("\n") else "\n"))
            else:
                rec = {"id": rid, "text": p.text, "status": "ok", "method": p.method,
                       "entities": [{"type": r.entity.type, "category": r.entity.category, "start": r.entity.start,
                                     "end": r.entity.end, "replacement": r.replacement} for r in p.replacements]}
                if p.epsilon_spent:
                    rec["epsilon_spent"] = p.epsilon_spent
                out.write(_json.dumps(rec, ensure_ascii=False) + "\n")
    finally:
        if out is not sys.stdout:
            out.close()
    return 1 if failed else 0


def _anonymize_tab(args: argparse.Namespace, cfg: Any) -> int:
    import json as _json

    from .anonymize import anonymize_documents, write_masks
    from .detection import build_detector
    from .randomness import Randomness

    if args.policy:
        raise BenchmarkError("--policy applies to plain text and JSONL input; for TAB files use --method adaptive")
    if not args.masks_out:
        raise BenchmarkError(f"{args.input}: a TAB JSON file needs --masks-out (masks for score-tab)")
    if args.seed is not None:
        rand = Randomness.benchmark(args.seed)
        print(f"randomness: {rand.label}", file=sys.stderr)
    else:
        rand = Randomness.deployment()
    docs = load_tab(args.input)
    out = anonymize_documents(docs, args.method, rand, progress=not args.no_progress,
                              detector=build_detector(args.detector), params=cfg.operator_params())
    write_masks(out["masks"], args.masks_out)
    print(f"wrote masks for {len(out['masks'])} documents to {args.masks_out}")
    blocked = [d for d, s in out["status"].items() if s != "ok"]
    if blocked:
        print(f"egress guard blocked {len(blocked)} document(s): no text is released for them", file=sys.stderr)
    if args.texts_out:
        Path(args.texts_out).parent.mkdir(parents=True, exist_ok=True)
        tmp = f"{args.texts_out}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            for doc_id, text in out["texts"].items():
                rec = {"doc_id": doc_id, "text": text, "method": args.method, "status": out["status"][doc_id],
                       "randomness": out["randomness"]}
                if doc_id in out["epsilon"]:
                    rec["epsilon_spent"] = out["epsilon"][doc_id]
                fh.write(_json.dumps(rec, ensure_ascii=False) + "\n")
        os.replace(tmp, args.texts_out)
        print(f"wrote desensitized texts to {args.texts_out}")
    return 0


def _cmd_data(args: argparse.Namespace) -> int:
    """Where the shipped data is, and whether every file matches data/SHA256SUMS."""
    import hashlib

    from .datasets import DATA_DIR_ENV, data_root

    root = data_root()
    if root is None or not (root / "SHA256SUMS").is_file():
        raise BenchmarkError(f"no data folder with SHA256SUMS (run from a clone, or set ${DATA_DIR_ENV})")
    bad = 0
    for line in (root / "SHA256SUMS").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        digest, rel = line.split("  ", 1)
        f = root / rel
        ok = f.is_file() and hashlib.sha256(f.read_bytes()).hexdigest() == digest
        bad += not ok
        print(f"{'ok     ' if ok else 'MISSING' if not f.is_file() else 'CHANGED'} {f}")
    print(f"{root}: {'all files verified' if not bad else f'{bad} file(s) missing or changed'}")
    return 1 if bad else 0


def _cmd_score_tab(args: argparse.Namespace) -> int:
    import json as _json

    from .anonymize import score_tab_file

    print(_json.dumps(score_tab_file(args.gold, args.masks), indent=1))
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from .reporting.report import write_report

    if not os.path.isfile(os.path.join(args.job_dir, "rank", "all_rank.csv")):
        raise BenchmarkError(f"{args.job_dir}: no rank/all_rank.csv here (pass <workspace>/<job name>)")
    print(f"report: {write_report(args.job_dir, args.config, args.test_data, judge=not args.no_judge)}")
    return 0


def _cmd_route(args: argparse.Namespace) -> int:
    import json as _json

    from .routing.routers import PrismGateRouter
    from .metrics.stats import percentile

    from .datasets.tab import iter_jsonl

    rows = []
    for lineno, rec in iter_jsonl(args.input):
        if not isinstance(rec, dict) or not isinstance(rec.get("prompt"), str) or "id" not in rec:
            raise BenchmarkError(f"{args.input}: line {lineno}: needs fields 'id' and 'prompt' (a string)")
        rows.append(rec)
    if not rows:
        raise BenchmarkError(f"{args.input}: no prompts")
    from .detection import build_detector

    router = PrismGateRouter(edge_risk_threshold=args.edge_risk_threshold, detector=args.detector)
    detector = build_detector(args.detector)
    detector.analyze("warm-up: load the models")  # model loading is not per-prompt latency
    latencies, counts = [], {}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as out:
        for rec in rows:
            t0 = time.perf_counter()
            spans = detector.analyze(rec["prompt"])
            d = router.decide_text(rec["prompt"], spans)
            latencies.append((time.perf_counter() - t0) * 1e3)
            counts[d.route.value] = counts.get(d.route.value, 0) + 1
            out.write(_json.dumps({"id": rec["id"], "route": d.route.value, "risk": d.risk, "probs": d.probs,
                                   "rule": d.rule, "entities": [{**s.to_dict(), "text": rec["prompt"][s.start:s.end]}
                                                                   for s in spans],
                                   "latency_ms": round(latencies[-1], 2)}, ensure_ascii=False) + "\n")
    print(f"routed {len(rows)} prompts to {args.out}: {counts}; profiling+routing latency "
          f"median {percentile(latencies, 0.5):.1f} ms, p95 {percentile(latencies, 0.95):.1f} ms")
    return 0


def _cmd_prepare_prism(args: argparse.Namespace) -> int:
    from .datasets.prism import load_prism_prompts, write_prism_jsonl

    n = write_prism_jsonl(load_prism_prompts(args.input), args.out, args.per_domain)
    print(f"wrote {n} prompts to {args.out}")
    return 0


def _cmd_models(args: argparse.Namespace) -> int:
    from .models.catalog import MODELS, model_path

    for key in args.keys or ["qwen2.5-coder-0.5b-instruct"]:
        if key not in MODELS:
            raise BenchmarkError(f"unknown model {key!r}; known: {sorted(MODELS)}")
        p = model_path(key)
        print(f"{key}: {p} (sha256 {MODELS[key].sha256} verified)")
    return 0


def _cmd_serve(args: argparse.Namespace) -> int:
    from .models.local_server import LocalServer

    srv = LocalServer(args.model, port=args.port).start()
    print(f"serving {args.model} at {srv.base_url}; export CEP_CLOUD_BASE_URL={srv.base_url} "
          f"CEP_CLOUD_MODEL={args.model}; Ctrl-C stops it")
    try:
        while srv.proc and srv.proc.poll() is None:
            time.sleep(1)
    except KeyboardInterrupt:
        pass
    finally:
        srv.stop()
    return 0


class _DefaultsShown(argparse.ArgumentDefaultsHelpFormatter):
    """Show an option's default unless it is empty or its help already names it."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if action.default in (None, False, [], argparse.SUPPRESS) or "default" in text:
            return text
        return super()._get_help_string(action) or text


def _text_arguments(parser: argparse.ArgumentParser, text: str, input_file: str) -> None:
    """``--text`` and ``--input`` (``-`` or neither: standard input), as every command that reads a text has them."""
    parser.add_argument("--text", default=None, help=text)
    parser.add_argument("--input", default=None, help=f"{input_file}; '-' or nothing: stdin")


def _detector_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--detector", default="default", choices=_detector_names(), metavar="DETECTOR",
                        help="a detector preset: " + " | ".join(_detector_names()) +
                             " (spacy and presidio are baselines)")


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    fmt = _DefaultsShown
    p = argparse.ArgumentParser(prog="cloud-edge-privacy", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND", title="commands")

    r = sub.add_parser("run", formatter_class=fmt, help="run a benchmarking job (Ianvs YAML) with our runner")
    r.add_argument("-f", "--config", required=True, help="benchmarkingjob.yaml (paths inside resolve against the CWD)")
    r.add_argument("--limit", type=int, default=None, help="only the first N samples")
    r.add_argument("--data-dir", default=None,
                   help="TAB folder holding echr_<split>.json, or a TAB JSON file (else $TAB_DATA_DIR, else the "
                        "dataset the testenv YAML names, as Ianvs does)")
    r.add_argument("--split", default="dev", help="TAB split to read from --data-dir (default: dev)")
    r.add_argument("--sample", action="store_true",
                   help="use the testenv's own dataset even when $TAB_DATA_DIR is set")
    r.add_argument("--test-data", default=None, help="an Ianvs JSONL (question/answer) to run on instead")
    r.add_argument("--no-progress", action="store_true", help="no progress bars")
    r.add_argument("--no-judge", action="store_true", help="report APR without the LLM-judge score")
    r.add_argument("--no-cache", action="store_true",
                   help="refuse cached answers: every answer comes from a model run now ($CEP_NO_CACHE=1)")
    r.add_argument("--executor", choices=("serial", "ray"), default="serial",
                   help="run test cases one after another, or spread them over a Ray cluster")
    r.add_argument("--address", default=None, help="Ray cluster address (default: start a local cluster)")
    r.add_argument("--workers", type=int, default=None, help="CPUs of the local Ray cluster (default: all)")
    r.add_argument("--shard-samples", default="1", metavar="N|auto",
                   help="with --executor ray: split each test case's samples into up to N Ray tasks (documents never "
                        "split; a test case with a per-session budget never split); auto: ceil(cluster CPUs / test "
                        "cases); metrics computed once on the merged predictions (default: 1, a task per test case)")
    r.add_argument("--ci", nargs="?", const="", default=None, metavar="EXPECTED_JSON",
                   help="after the run, check every metric against committed expected values (default: "
                        "<config>_expected.json); exit 1 with a diff on a regression")
    r.set_defaults(func=_cmd_run)

    t = sub.add_parser("prepare-tab", formatter_class=fmt, help="convert an official TAB JSON file to the JSONL Ianvs reads")
    t.add_argument("--input", required=True, help="TAB JSON file, e.g. echr_dev.json")
    t.add_argument("--out", required=True, help="output folder (or a .jsonl file path)")
    t.add_argument("--instruction", default=DEFAULT_INSTRUCTION, help="task instruction put in each sample")
    t.add_argument("--limit", type=int, default=None)
    t.set_defaults(func=_cmd_prepare)

    a = sub.add_parser("anonymize", formatter_class=fmt,
                       help="protect plain text (--text or stdin), JSONL of {\"text\": ...}, or a TAB JSON file",
                       description="Protect text before it leaves the edge. Plain text (--text, or piped to stdin) "
                                   "prints the protected text; JSONL of {\"text\": ...} (--input x.jsonl or stdin) "
                                   "writes one JSON record per line with the replaced entities; a TAB JSON file "
                                   "writes masks for score-tab.")
    _text_arguments(a, "the text to protect", "a .jsonl of {\"text\": ...} records or a TAB JSON file")
    a.add_argument("--method", default="pseudonym", choices=_method_names(), metavar="METHOD",
                   help="privacy method: " + " | ".join(_method_names()))
    a.add_argument("--policy", action="append", default=[], metavar="TYPE=METHOD",
                   help="per-entity-type method, repeatable (e.g. EMAIL=placeholder PERSON=pseudonym "
                        "DATE_TIME=keep); other types get --method")
    a.add_argument("--epsilon", type=float, default=None, help="privacy budget for DP/LDP methods (finite, > 0)")
    a.add_argument("--seed", type=int, default=None,
                   help="benchmark mode: reproducible from this seed, NOT private against whoever knows it "
                        "(default: deployment mode, OS CSPRNG noise and keyed choices under $CEP_SECRET_KEY)")
    _detector_argument(a)
    a.add_argument("--masks-out", default=None,
                   help="TAB input: masks.json, {doc_id: [[start, end, replacement], ...]}")
    a.add_argument("--texts-out", default=None, help="write the protected texts (JSONL) here instead of stdout")
    a.add_argument("--no-progress", action="store_true", help="no progress bar (TAB input)")
    a.set_defaults(func=_cmd_anonymize)

    dt = sub.add_parser("detect", formatter_class=fmt,
                        help="print what a detector finds in a text, and with --trace why each step changed it",
                        description="Print the spans a detector finds in one text (start, end, category, source, "
                                    "surface), for the edge operator: the text's values are printed, nothing is "
                                    "sent. --trace adds which post-detection step dropped, added or changed which "
                                    "span; --without-step switches a step off.")
    _text_arguments(dt, "the text to read", "a text file")
    _detector_argument(dt)
    dt.add_argument("--trace", action="store_true", help="also print what each post-detection step changed")
    dt.add_argument("--without-step", action="append", default=[], metavar="STEP",
                    help="switch this post-detection step off (repeatable; names in docs/detection.md)")
    dt.set_defaults(func=_cmd_detect)

    sc = sub.add_parser("score-tab", formatter_class=fmt, help="score masks with TAB's ER_di, ER_qi, token recall and precision")
    sc.add_argument("--gold", required=True, help="TAB JSON file with the gold annotations")
    sc.add_argument("--masks", required=True, help="masks.json as written by anonymize")
    sc.set_defaults(func=_cmd_score_tab)

    rp = sub.add_parser("report", formatter_class=fmt, help="(re)write report.md and plots for a finished job")
    rp.add_argument("job_dir", help="<workspace>/<job name>, e.g. workspace/tab_privacy_default")
    rp.add_argument("-f", "--config", default=None, help="benchmarkingjob.yaml, for the provenance hashes")
    rp.add_argument("--test-data", default=None, help="the JSONL the job ran on, for its hash")
    rp.add_argument("--no-judge", action="store_true", help="APR without the LLM-judge score")
    rp.set_defaults(func=_cmd_report)

    pp = sub.add_parser("prepare-prism", formatter_class=fmt, help="convert PRISM prompts to Ianvs JSONL (gold identifiers in y)")
    pp.add_argument("--input", required=True, help="prism_prompts.jsonl")
    pp.add_argument("--out", required=True, help="output .jsonl")
    pp.add_argument("--per-domain", type=int, default=None, help="keep the first N prompts of each domain")
    pp.set_defaults(func=_cmd_prepare_prism)

    ro = sub.add_parser("route", formatter_class=fmt, help="route prompts with the PRISM soft gate (no LLM call)")
    ro.add_argument("--input", required=True, help="JSONL with {id, prompt} per line")
    ro.add_argument("--out", required=True, help="JSONL with {id, route, risk, entities, latency_ms}")
    ro.add_argument("--edge-risk-threshold", type=float, default=None,
                    help="privacy-first rule: prompts with risk R(P) at or above this stay on the edge")
    ro.add_argument("--detector", default="default", choices=_detector_names(), metavar="DETECTOR",
                    help="a detector preset: " + " | ".join(_detector_names()))
    ro.set_defaults(func=_cmd_route)

    m = sub.add_parser("models", formatter_class=fmt, help="assemble and verify the GGUF models installed from PyPI")
    m.add_argument("keys", nargs="*", help="catalog keys (default: the default edge/cloud model)")
    m.set_defaults(func=_cmd_models)

    from .proxy.cli import add_parser as add_proxy_parser

    add_proxy_parser(sub)

    s = sub.add_parser("serve", formatter_class=fmt, help="start the offline cloud (llama.cpp OpenAI-compatible server) by hand")
    s.add_argument("--model", default="qwen2.5-coder-0.5b-instruct", help="catalog key or GGUF file")
    s.add_argument("--port", type=int, default=None, help="port on 127.0.0.1 (default: a free one)")
    s.set_defaults(func=_cmd_serve)

    d = sub.add_parser("data", formatter_class=fmt,
                       help="show the data shipped in the repository's data/ and verify it against SHA256SUMS")
    d.set_defaults(func=_cmd_data)
    return p


def _method_names() -> tuple:
    """``none`` (the unprotected baseline) and every registered privacy method."""
    from .desensitization import list_operators
    from .core.gateway import NO_PROTECTION

    return (NO_PROTECTION,) + tuple(list_operators())


def _detector_names() -> tuple:
    from .detection.presets import DETECTORS

    return DETECTORS


def _short_warning(message: Any, category: Any, filename: str, lineno: int, line: Optional[str] = None) -> str:
    return f"warning: {message}\n"


def main(argv: Optional[List[str]] = None) -> int:
    import warnings

    warnings.formatwarning = _short_warning  # a note for the user, not a source location
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except BenchmarkError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
