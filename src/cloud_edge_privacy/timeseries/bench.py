"""The time-series privacy benchmark: prompts, the two LLMs, STS / numeric error / attacks, tables.

One sample = (series, prompt template).  For each method and noise seed the edge releases the series once
(stored noise, reused by all templates), the edge model and the cloud model answer each template with the
original values and with the released values, and STS is the cosine of the two answers' embeddings.
Answers are cached on disk (temperature 0), so a rerun costs no LLM time.
"""
from __future__ import annotations

import json
import math
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..hashing import stable_hash
from ..randomness import BENCHMARK_CAVEAT, Randomness
from .attack import attack, success_rates
from .data import DATASET_INFO, DATASETS, Series, default_series
from .operator import DEFAULT_THRESHOLD, METHODS, NoiseStore, Release, TimeSeriesProtector
from .ts_metrics import numeric_error, sts, summarise

SYSTEM = "You are a concise data assistant. Answer in one or two short sentences, using only the given values."

DESCRIPTIONS = {
    "acsf1": "Peak power of one household appliance (standardised units), one value per block of readings",
    "solar": "Solar generation of a home's panels as a share of capacity, one value per {step}",
    "mitdb": "A patient's heart rate in beats per minute, one value per heartbeat",
}
EVENT_QUESTION = {
    "acsf1": "When was the appliance switched on (bursts of high power), and how often?",
    "solar": "Describe how generation changed over the day and when it peaked.",
    "mitdb": "Is there any sudden heart-rate spike? Say where, briefly.",
}
DECIMALS = {"acsf1": 2, "solar": 2, "mitdb": 0}
TEMPLATES = ("max", "mean", "event")


def template_question(dataset: str, template: str) -> str:
    if template == "max":
        return "What is the highest value, and at which position does it occur? Start with the number."
    if template == "mean":
        return "What is the average of these values? Start with the number."
    if template == "event":
        return EVENT_QUESTION[dataset]
    raise ValueError(f"unknown template {template!r}; known: {TEMPLATES}")


def numeric_truth(s: Series, template: str) -> Optional[float]:
    """The true answer of a numeric template on the ORIGINAL series (None for free-text templates)."""
    if template == "max":
        return float(max(s.values))
    if template == "mean":
        return float(sum(s.values) / len(s.values))
    return None


def format_values(s: Series, release: Release) -> str:
    d = DECIMALS.get(s.dataset, 2)
    fmt = (lambda v: f"{v:.{d}f}") if d > 0 else (lambda v: f"{v:.0f}")
    if release.method == "user_windows":
        return "; ".join(f"{lab}: {fmt(v)}" for lab, v in zip(release.labels, release.sent))
    return ", ".join(fmt(v) for v in release.sent)


def build_messages(s: Series, release: Release, template: str) -> List[Dict[str, str]]:
    """The prompt the edge sends (only released values, never the originals unless method = none)."""
    what = f"{len(release.sent)} window averages" if release.method == "user_windows" else \
        f"{len(release.sent)} values in order"
    user = f"{DESCRIPTIONS[s.dataset].format(step=s.step)}. {what}:\n{format_values(s, release)}\n\n{template_question(s.dataset, template)}"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


class TSModels:
    """The edge model (llama.cpp in process) and the cloud model (OpenAI-compatible HTTP), both cached.

    The cloud endpoint is ``$CEP_TS_CLOUD_BASE_URL`` (+ ``$CEP_TS_CLOUD_MODEL``, ``$CEP_TS_CLOUD_API_KEY``) or,
    offline, the local llama.cpp server started on first use.
    """

    def __init__(self, max_tokens: int = 48, edge_model: str = "qwen2.5-coder-0.5b-instruct",
                 cloud_model: str = "qwen2.5-coder-0.5b-instruct", seed: int = 42, n_ctx: int = 2048,
                 cache_only: bool = False) -> None:
        self.cache_only = cache_only  # answer only from the disk caches (None when missing); no model runs
        self.max_tokens = int(max_tokens)
        self.edge_name = edge_model
        self.cloud_name = cloud_model
        self.seed = int(seed)
        self.n_ctx = int(n_ctx)
        self._edge: Any = None
        self._cloud: Any = None
        self._cloud_model_id = ""
        self._cache: Any = None
        self.calls = {"edge": 0, "cloud": 0, "edge_cached": 0, "cloud_cached": 0}

    def _response_cache(self) -> Any:
        if self._cache is None:
            from ..models.catalog import cache_dir
            from ..models.response_cache import ResponseCache

            self._cache = ResponseCache(cache_dir() / "timeseries_cloud_cache")
        return self._cache

    def _edge_cached(self, messages: List[Dict[str, str]]) -> Optional[str]:
        """The edge cache entry LlamaEdgeModel.chat would read (same key), without loading the model."""
        from ..models.catalog import MODELS, cache_dir
        from ..models.response_cache import ResponseCache

        entry = MODELS.get(self.edge_name)
        params = {"max_tokens": self.max_tokens, "temperature": 0.0, "seed": self.seed}
        key = stable_hash({"model": entry.sha256 if entry else self.edge_name, "messages": messages, **params})
        hit = ResponseCache(cache_dir() / "edge_cache").get(key)
        return None if hit is None else str(hit["answer"])

    def edge(self, messages: List[Dict[str, str]]) -> Optional[str]:
        if self.cache_only:
            got = self._edge_cached(messages)
            self.calls["edge_cached" if got is not None else "edge_missing"] = \
                self.calls.get("edge_cached" if got is not None else "edge_missing", 0) + 1
            return got
        if self._edge is None:
            from ..models.llama_edge import LlamaEdgeModel

            self._edge = LlamaEdgeModel(self.edge_name, n_ctx=self.n_ctx, max_tokens=self.max_tokens,
                                        temperature=0.0, seed=self.seed)
        out = self._edge.chat(messages)
        self.calls["edge_cached" if out.get("cache_hit") else "edge"] += 1
        return str(out["answer"])

    def _cloud_client(self) -> Any:
        """The project's one HTTP cloud client (per-attempt audit before sending, bounded retries), with the
        endpoint from ``$CEP_TS_CLOUD_BASE_URL`` / ``$CEP_TS_CLOUD_MODEL`` / ``$CEP_TS_CLOUD_API_KEY`` or the
        local llama.cpp server; the audit log is the run context's (``$RESULT_SAVED_URL/cloud_audit.jsonl``)."""
        if self._cloud is None:
            from ..core.context import CONTEXTS
            from ..models.cloud_client import CloudClient, resolve_endpoint

            ep = resolve_endpoint("CEP_TS_CLOUD_BASE_URL", "CEP_TS_CLOUD_MODEL", "CEP_TS_CLOUD_API_KEY",
                                  self.cloud_name)
            self._cloud = CloudClient(ep, CONTEXTS.get().audit,
                                      {"max_tokens": self.max_tokens, "temperature": 0.0, "seed": self.seed},
                                      timeout_s=300.0, max_retries=2, cache=self._response_cache())
        return self._cloud

    def cloud(self, messages: List[Dict[str, str]]) -> Optional[str]:
        if self.cache_only:
            base = os.environ.get("CEP_TS_CLOUD_BASE_URL", "")
            from ..models.cloud_client import CloudClient, Endpoint

            ep = Endpoint(base, os.environ.get("CEP_TS_CLOUD_MODEL", self.cloud_name), "", "remote") if base \
                else Endpoint("", self.cloud_name, "", "local-llama.cpp")
            probe = CloudClient(ep, None, {"max_tokens": self.max_tokens, "temperature": 0.0, "seed": self.seed})  # type: ignore[arg-type]
            hit = self._response_cache().get(probe.cache_key(messages))
            self.calls["cloud_cached" if hit is not None else "cloud_missing"] = \
                self.calls.get("cloud_cached" if hit is not None else "cloud_missing", 0) + 1
            return None if hit is None else str(hit["answer"])
        out = self._cloud_client().chat(messages, {"sample_id": "timeseries", "route": "cloud",
                                                   "privacy_method": "timeseries"})
        self.calls["cloud_cached" if out.cache_hit else "cloud"] += 1
        return out.answer

    def ask(self, which: str, messages: List[Dict[str, str]]) -> Optional[str]:
        return self.edge(messages) if which == "edge" else self.cloud(messages)


@dataclass
class BenchConfig:
    """Everything a run depends on (written into results.json)."""

    datasets: Tuple[str, ...] = DATASETS
    length: int = 24
    series_per_dataset: int = 1
    methods: Tuple[str, ...] = METHODS
    seeds: Tuple[int, ...] = (1, 2, 3)
    templates: Tuple[str, ...] = TEMPLATES
    models: Tuple[str, ...] = ("edge", "cloud")
    max_tokens: int = 48
    threshold: float = DEFAULT_THRESHOLD
    calibration: str = "public"
    uniform_epsilon: float = 1.0
    user_epsilon: float = 10.0
    windows: int = 4
    attack_draws: int = 200
    attack_tolerance: float = 0.05


def make_protector(cfg: BenchConfig, seed: int, store: Optional[NoiseStore] = None) -> TimeSeriesProtector:
    return TimeSeriesProtector(Randomness.benchmark(seed), store=store, threshold=cfg.threshold,
                               calibration=cfg.calibration, uniform_epsilon=cfg.uniform_epsilon,
                               user_epsilon=cfg.user_epsilon, windows=cfg.windows)


def release_for(s: Series, method: str, seed: int, cfg: BenchConfig, store: Optional[NoiseStore]) -> Release:
    return make_protector(cfg, seed, store).protect(s, method)


def own_composition(releases: Sequence[Tuple[Series, Release]]) -> Dict[str, Dict[str, float]]:
    """Basic sequential composition per user and kind, computed here (pure ε add up; kinds kept apart)."""
    out: Dict[str, Dict[str, float]] = {}
    for s, r in releases:
        for c in r.charges:
            kinds = out.setdefault(s.user_id, {})
            kinds[c.privacy_map.kind] = round(kinds.get(c.privacy_map.kind, 0.0) + c.privacy_map.epsilon, 9)
    return out


def charge_accountant(releases: Sequence[Tuple[Series, Release]]) -> Dict[str, Any]:
    """Composed ε per user: from the shared :class:`PrivacyAccountant` (one scope per series) when it works,
    always also from :func:`own_composition`; a disagreement or an accountant error is reported, not hidden."""
    own = own_composition(releases)
    try:
        from ..desensitization.accountant import PrivacyAccountant

        per_user: Dict[str, Any] = {}
        for s, r in releases:
            acc = per_user.setdefault(s.user_id, PrivacyAccountant())
            acc.charge(f"{s.dataset}/{s.series_id}", r.charges)
        shared = {u: {k: v["epsilon"] for k, v in acc.spent().items()} for u, acc in per_user.items()}
        return {"per_user": own, "accountant": shared, "agree": shared == {u: {k: v for k, v in d.items()
                                                                                if k != "heuristic"}
                                                                            for u, d in own.items()}}
    except Exception as exc:  # the shared accountant is being written concurrently; keep our own numbers
        return {"per_user": own, "accountant_error": f"{type(exc).__name__}: {exc}"}


def attack_table(series: Sequence[Series], cfg: BenchConfig) -> Dict[str, Dict[str, Any]]:
    """Attack success rates per (dataset/series, method) over ``cfg.attack_draws`` noise draws."""
    out: Dict[str, Dict[str, Any]] = {}
    for s in series:
        for method in cfg.methods:
            prot = make_protector(cfg, 10_000)
            draws = 1 if method == "none" else cfg.attack_draws
            outcomes = [attack(prot.protect(s, method, tag=f"attack-{d}"), s, cfg.attack_tolerance)
                        for d in range(draws)]
            out[f"{s.dataset}/{s.series_id}/{method}"] = success_rates(outcomes)
    return out


def run_bench(cfg: BenchConfig, models: Optional[TSModels] = None, noise_dir: Optional[Path] = None,
              series: Optional[List[Series]] = None, log: Any = None) -> Dict[str, Any]:
    """Run the whole grid; returns the results dict (``rows`` = one per dataset x method, plus details)."""
    t0 = time.time()
    models = models or TSModels(cfg.max_tokens)
    series = series or default_series(cfg.length, cfg.series_per_dataset, cfg.datasets)
    store = NoiseStore(noise_dir)
    samples: List[Dict[str, Any]] = []
    releases: Dict[str, Dict[str, Any]] = {}
    originals: Dict[Tuple[str, str, str], str] = {}
    for s in series:  # the references first, then seed by seed, so an interrupted run leaves whole seeds cached
        orig_release = release_for(s, "none", 0, cfg, store)
        for which in cfg.models:
            for tpl in cfg.templates:
                originals[(s.user_id, which, tpl)] = models.ask(which, build_messages(s, orig_release, tpl))
    for seed in cfg.seeds:
        for method in cfg.methods:
            if method == "none" and seed != cfg.seeds[0]:
                continue
            for s in series:
                rel = release_for(s, method, seed if method != "none" else 0, cfg, store)
                releases[f"{s.dataset}/{s.series_id}/{method}/{seed if method != 'none' else 0}"] = rel.to_dict()
                for which in cfg.models:
                    for tpl in cfg.templates:
                        ref = originals[(s.user_id, which, tpl)]
                        ans = ref if method == "none" else models.ask(which, build_messages(s, rel, tpl))
                        if ref is None or ans is None:  # --cache-only and never answered: left out, n says so
                            continue
                        truth = numeric_truth(s, tpl)
                        samples.append({"dataset": s.dataset, "series": s.series_id, "attribute": s.attribute,
                                        "method": method, "seed": seed if method != "none" else 0, "model": which,
                                        "template": tpl, "answer_original": ref, "answer_sent": ans,
                                        "truth": truth, "error_original": numeric_error(ref, truth, s.sensitivity),
                                        "error_sent": numeric_error(ans, truth, s.sensitivity)})
                if log:
                    log(f"seed {seed} {method} {s.dataset}/{s.series_id}: {models.calls} {time.time() - t0:.0f}s")
    sims = sts([(x["answer_original"], x["answer_sent"]) for x in samples])
    for x, v in zip(samples, sims):
        x["sts"] = round(v, 5)
    attacks = attack_table(series, cfg)
    rows = summary_rows(series, samples, releases, attacks, cfg)
    first = {m: [(s, Release(**_release_args(releases[f"{s.dataset}/{s.series_id}/{m}/{cfg.seeds[0] if m != 'none' else 0}"])))
                 for s in series] for m in cfg.methods}
    accountant = {m: charge_accountant(v) for m, v in first.items() if m != "none"}
    return {"config": asdict(cfg), "randomness": f"benchmark seeds {list(cfg.seeds)}: {BENCHMARK_CAVEAT}",
            "datasets": {k: asdict(v) for k, v in DATASET_INFO.items() if k in cfg.datasets},
            "series": [s.to_dict() for s in series], "rows": rows, "attacks": attacks,
            "accountant_pure_epsilon_per_user": accountant, "releases": releases, "samples": samples,
            "llm_calls": dict(models.calls), "elapsed_s": round(time.time() - t0, 1)}


def _release_args(d: Dict[str, Any]) -> Dict[str, Any]:
    """Rebuild a :class:`Release` (with its charges) from :meth:`Release.to_dict`."""
    from ..desensitization.base import PrivacyCharge, PrivacyMap

    args = {k: v for k, v in d.items() if k != "charges"}
    for k in ("per_value_epsilon", "epsilon_series", "epsilon_user"):
        args[k] = math.inf if args[k] == "inf" else args[k]
    args["charges"] = [PrivacyCharge(PrivacyMap(c["mechanism"], c["kind"], c["epsilon"], 0.0, c["neighbouring"],
                                                c["protects"]), c["what"]) for c in d["charges"]]
    return args


def summary_rows(series: Sequence[Series], samples: List[Dict[str, Any]], releases: Dict[str, Dict[str, Any]],
                 attacks: Dict[str, Dict[str, Any]], cfg: BenchConfig) -> List[Dict[str, Any]]:
    """One row per (dataset, attribute, method): ε, STS per model (mean, 95% CI), numeric error, attacks."""
    rows = []
    for ds in dict.fromkeys(s.dataset for s in series):
        ss = [s for s in series if s.dataset == ds]
        for method in cfg.methods:
            rel = [r for k, r in releases.items() if k.startswith(f"{ds}/") and k.split("/")[2] == method]
            row: Dict[str, Any] = {"dataset": ds, "attribute": ss[0].attribute, "method": method,
                                   "n_values": len(ss[0].values),
                                   "per_value_epsilon": rel[0]["per_value_epsilon"],
                                   "chosen_epsilon": rel[0].get("chosen_epsilon"),
                                   "epsilon_series": rel[0]["epsilon_series"],
                                   "epsilon_user": rel[0]["epsilon_user"],
                                   "guarantee": (rel[0]["charges"][0]["kind"] if rel[0]["charges"] else "none")}
            for which in cfg.models:
                sel = [x for x in samples if x["dataset"] == ds and x["method"] == method and x["model"] == which]
                row[f"sts_{which}"] = summarise([x["sts"] for x in sel])
                row[f"numeric_error_{which}"] = summarise([x["error_sent"] for x in sel])
                row[f"numeric_error_{which}_original"] = summarise([x["error_original"] for x in sel])
            att = [attacks[f"{s.dataset}/{s.series_id}/{method}"] for s in ss]
            for k in ("reconstruction_success", "event_success", "event_balanced_accuracy", "reconstruction_nmae"):
                row[k] = round(sum(a[k] for a in att) / len(att), 4)
            rows.append(row)
    return rows


def _fmt_eps(v: Any) -> str:
    if v in (None, "inf") or (isinstance(v, float) and math.isinf(v)):
        return "∞" if v is not None else "-"
    return f"{v:g}"


def _fmt_ci(d: Dict[str, float], pct: bool = True) -> str:
    if not d or d.get("n", 0) == 0 or math.isnan(d["mean"]):
        return "-"
    f = 100.0 if pct else 1.0
    return f"{d['mean'] * f:.1f} [{d['lo'] * f:.1f}, {d['hi'] * f:.1f}] n={d['n']}"


def markdown_table(results: Dict[str, Any]) -> str:
    """The table per dataset and attribute for the README."""
    models = results["config"]["models"]
    head = ["dataset", "attribute", "method", "ε per value (chosen)", "ε series = ε user", "guarantee"]
    head += [f"STS {m} % [95% CI]" for m in models]
    head += [f"num. error {m} % of Δf" for m in models]
    head += ["attack: reconstruction", "attack: event", "event bal. acc."]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results["rows"]:
        cells = [r["dataset"], r["attribute"], r["method"],
                 _fmt_eps(r["per_value_epsilon"]) + (f" ({_fmt_eps(r['chosen_epsilon'])})" if r["chosen_epsilon"] else ""),
                 _fmt_eps(r["epsilon_series"]), r["guarantee"]]
        cells += [_fmt_ci(r[f"sts_{m}"]) for m in models]
        cells += [_fmt_ci(r[f"numeric_error_{m}"]) for m in models]
        cells += [f"{r['reconstruction_success'] * 100:.0f}%", f"{r['event_success'] * 100:.0f}%",
                  f"{r['event_balanced_accuracy']:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_results(results: Dict[str, Any], out_dir: Path) -> Dict[str, str]:
    """results.json (everything, including answers) and table.md."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "results.json").write_text(json.dumps(results, indent=1, default=str), encoding="utf-8")
    table = markdown_table(results)
    (out_dir / "table.md").write_text(
        f"<!-- generated by scripts/run_timeseries_bench.py; {results['randomness']} -->\n\n{table}\n",
        encoding="utf-8")
    return {"json": str(out_dir / "results.json"), "table": str(out_dir / "table.md")}


def write_ianvs_jsonl(path: Path, series: Sequence[Series], templates: Sequence[str] = TEMPLATES) -> int:
    """The Ianvs test file: one line per (series, template); ``question`` = {text (the user's request with the
    raw values, as the edge receives it), series, template}, ``answer`` =
    the numeric truth on the original series as a string ("" for free-text templates)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for s in series:
        for tpl in templates:
            truth = numeric_truth(s, tpl)
            raw = build_messages(s, Release("none", list(s.values), [], math.inf, math.inf, math.inf), tpl)
            lines.append(json.dumps({"question": {"text": raw[-1]["content"], "series": s.to_dict(), "template": tpl},
                                     "answer": "" if truth is None else f"{truth:.6g}"}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines)
