"""The experiment: every model family x method x ε x seed (Dirichlet α = 1), an α sweep, membership inference
(loss threshold and LiRA), the distillation teacher's own quality; tables and plots.

One call of :func:`run_experiment` does it all:

1. public proxy passages (:func:`.distill.proxy_passages`) and their teacher labels (cache first, LLM for
   misses), and the teacher scored against TAB gold on dev passages (:func:`teacher_quality`);
2. the frozen MiniLM's token vectors of every text (disk cache), when the ``minilm`` family is in the grid;
3. LiRA shadow models per model family (shared by that family's targets);
4. the cells of :func:`plan_cells`: ``grid_cells(methods, ε)`` for every model family at the main α (each method
   at :meth:`ExperimentSpec.seeds_for` its seeds), the α-sweep cells, the μ ablation; each cell trains one
   detector and evaluates PSR / token precision on dev, the loss-threshold MIA and LiRA.

Cells and shadows run in ``workers`` processes (one torch thread each; spawn), longest first.
"""
from __future__ import annotations

import csv
import json
import math
import multiprocessing
import os
import statistics
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from ..datasets.tab import TabDocument, load_tab
from .distill import (ProxySet, build_proxy_set, eval_passages, gold_token_share, load_background, load_teacher_record,
                      proxy_passages, score_spans_on_gold, teacher_summary)
from .lira import ShadowRefs, lira_attack, mean_over, shadow_membership, train_shadow
from .mia import loss_threshold_attack
from .methods import METHODS, parse_method
from .model import Windows, make_windows, new_model, save_model, tokenize
from .simulation import FedConfig, evaluate_psr, run_method

DEFAULT_EPSILONS = (1.0, 10.0)
DEFAULT_SEEDS = (0, 1, 2)
#: the rows the default experiment runs (issue 24's acceptance list): centralised, FedAvg, DP-FedAvg, DP-FTRL,
#: local-DP FedAdam (paper's σ and accounted), PrivateAI (accounted, and with the paper's σ)
DEFAULT_METHODS: Tuple[str, ...] = ("centralized", "fedavg", "dp_fedavg", "dp_ftrl", "fedadam_ldp_paper",
                                    "fedadam_ldp_accounted", "privateai", "privateai_paper")
#: the goal rows (a DP row at ε <= 10 within 0.10 PSR of FedAvg): every seed; the other methods run the first seed
GOAL_METHODS: Tuple[str, ...] = ("fedavg", "dp_fedavg", "dp_ftrl")
# α does not matter to centralized (pooled) or teacher_only (no client data): not in the sweep.
#: the full grid's α sweep (both families): the best private method of the main grid (DP-FedAvg, ε = 10) beside
#: its non-private references, and the FedAdam / local-DP / PrivateAI cells of the earlier hashed-CNN sweep
SWEEP_CELLS: Tuple[Tuple[str, float], ...] = (("local_only", math.inf), ("fedavg", math.inf), ("fedadam", math.inf),
                                              ("dp_fedavg", 10.0), ("fedadam_ldp_accounted", 10.0),
                                              ("privateai", 10.0), ("privateai", math.inf))
#: the default experiment's α sweep: the best DP method and FedAvg (its non-private reference)
DEFAULT_SWEEP_CELLS: Tuple[Tuple[str, float], ...] = (("fedavg", math.inf), ("dp_fedavg", 10.0))
MODEL_KINDS = ("minilm", "hashed_cnn")
# relative run time of a cell (measured on 2 idle cores: DP-SGD cells 43-55 s, most others 5-11 s); longest first,
# and the weights of the projected remaining time
_COST = {"dp_fedavg": 7.0, "local_only": 1.4, "privateai": 1.3, "privateai_paper": 1.3, "centralized": 1.4,
         "teacher_only": 0.4}
ATTACKER_SEED = 12345


def grid_cells(methods: Sequence[str], epsilons: Sequence[float]) -> List[Tuple[str, float]]:
    """(method, ε) pairs: DP methods at each finite ε, ``privateai`` at each finite ε and ∞, the others at ∞."""
    cells: List[Tuple[str, float]] = []
    for name in methods:
        m = parse_method(name)
        if m.needs_epsilon:
            cells.extend((name, float(e)) for e in epsilons)
        elif m.takes_epsilon:
            cells.extend([(name, float(e)) for e in epsilons] + [(name, math.inf)])
        else:
            cells.append((name, math.inf))
    return cells


@dataclass(frozen=True)
class ExperimentSpec:
    """What :func:`run_experiment` runs. The defaults are the default experiment (issue 24's rows, goal rows at
    every seed, the rest at ``other_seeds`` seeds, a 1-seed α sweep of DP-FedAvg ε = 10 and FedAvg, 16 LiRA
    shadows); :meth:`full_grid` is every method at every seed with the wider sweep and 32 shadows."""

    models: Tuple[str, ...] = MODEL_KINDS
    methods: Tuple[str, ...] = DEFAULT_METHODS
    epsilons: Tuple[float, ...] = DEFAULT_EPSILONS
    seeds: Tuple[int, ...] = DEFAULT_SEEDS
    seeded_methods: Optional[Tuple[str, ...]] = GOAL_METHODS  # run at every seed; None: every method
    other_seeds: int = 1  # how many of ``seeds`` (the first ones) the methods not in ``seeded_methods`` run
    sweep_alphas: Tuple[float, ...] = (0.1, 10.0)
    sweep_cells: Tuple[Tuple[str, float], ...] = DEFAULT_SWEEP_CELLS
    sweep_models: Tuple[str, ...] = ("minilm",)
    sweep_seeds: Optional[int] = 1  # how many of ``seeds`` the α-sweep cells run; None: all
    kd_mu_ablation: Tuple[float, ...] = ()  # privateai (all ε) again with these μ (main α); e.g. (0.5,)
    ablation_models: Tuple[str, ...] = ("hashed_cnn",)  # the model families the μ ablation runs on
    n_shadows: int = 16
    n_proxy: int = 100
    n_teacher_eval: int = 30
    passage_tokens: int = 100
    passage_min_tokens: int = 30
    workers: int = 2
    threads_per_worker: int = 1
    max_train_docs: Optional[int] = None
    max_dev_docs: Optional[int] = None

    @staticmethod
    def full_grid() -> "ExperimentSpec":
        """Every named method x ε at every seed for both families, the α sweep of :data:`SWEEP_CELLS` for both
        families at every seed, the μ = 0.5 distillation ablation, 32 LiRA shadows: every cell of the committed
        ``results/grid_rows.json`` and more (``--full-grid``)."""
        return ExperimentSpec(methods=METHODS, seeded_methods=None, sweep_cells=SWEEP_CELLS, sweep_models=MODEL_KINDS,
                              sweep_seeds=None, kd_mu_ablation=(0.5,), n_shadows=32)

    @staticmethod
    def smoke() -> "ExperimentSpec":
        return ExperimentSpec(seeds=(0,), sweep_alphas=(), kd_mu_ablation=(), n_shadows=2, n_proxy=4, n_teacher_eval=2,
                              workers=1,
                              passage_min_tokens=5, max_train_docs=6, max_dev_docs=3)

    def seeds_for(self, method: str) -> Tuple[int, ...]:
        """The seeds a main-grid cell of ``method`` runs."""
        if self.seeded_methods is None or method in self.seeded_methods:
            return self.seeds
        return self.seeds[:max(1, self.other_seeds)]

    def sweep_seed_list(self) -> Tuple[int, ...]:
        return self.seeds if self.sweep_seeds is None else self.seeds[:max(1, self.sweep_seeds)]


#: one cell: (model family, method, ε, seed, α, distillation μ override or None)
CellTask = Tuple[str, str, float, int, float, Optional[float]]


def plan_cells(spec: ExperimentSpec, main_alpha: float) -> List[CellTask]:
    """Every cell ``spec`` runs, longest first: the main grid at ``main_alpha`` (each method at
    :meth:`ExperimentSpec.seeds_for`), the α-sweep cells, the μ ablation. No training; the default experiment and
    ``--full-grid`` differ only here."""
    main_cells = grid_cells(spec.methods, spec.epsilons)
    sweep = [(m, e, a) for a in spec.sweep_alphas for m, e in spec.sweep_cells if m in spec.methods]
    tasks: List[CellTask] = [(k, m, e, s, main_alpha, None) for k in spec.models for m, e in main_cells
                             for s in spec.seeds_for(m)]
    tasks += [(k, m, e, s, a, None) for k in spec.models if k in spec.sweep_models for m, e, a in sweep
              for s in spec.sweep_seed_list()]
    tasks += [(k, m, e, s, main_alpha, mu) for k in spec.models if k in spec.ablation_models
              for mu in spec.kd_mu_ablation for m, e in main_cells if m == "privateai" for s in spec.seeds_for(m)]
    return sorted(tasks, key=lambda c: -cell_cost(c[1]))


def cell_cost(method: str) -> float:
    """Relative run time of a cell of ``method`` (:data:`_COST`; 1 for a method not listed; an ablation
    ``<method>_mu<μ>`` costs what its method does)."""
    return _COST.get(method.split("_mu")[0], 1.0)


def progress_line(done: int, total: int, elapsed: float, cost_done: float, cost_total: float) -> str:
    """``cells k/N, elapsed, projected remaining`` (remaining = elapsed x remaining cost / cost done)."""
    left = elapsed * (cost_total - cost_done) / cost_done if cost_done > 0 else float("nan")
    return f"cells {done}/{total}, {elapsed / 60:.1f} min elapsed, ~{left / 60:.1f} min left"


@dataclass
class CellContext:
    """Everything one cell needs (pickled to the worker process with each task)."""

    train_docs: List[TabDocument]
    dev_docs: List[TabDocument]
    proxy: Optional[ProxySet]
    refs: Dict[str, ShadowRefs]
    cfg: FedConfig
    proxies: Dict[str, ProxySet] = field(default_factory=dict)

    def cfg_for(self, kind: str) -> FedConfig:
        return self.cfg.with_model(kind)

    def proxy_for(self, kind: str) -> Optional[ProxySet]:
        return self.proxies.get(kind, self.proxy)


def evaluate_run(run: Dict[str, Any], train_docs: Sequence[TabDocument], dev_docs: Sequence[TabDocument],
                 dev_windows: Windows, cfg: FedConfig, seed: int) -> Dict[str, Any]:
    """PSR / token precision on dev, and the loss-threshold MIA (members = the model's training windows)."""
    if "models" in run:  # local_only: mean over clients; MIA on each client's own data, averaged
        psr, mia = [], []
        for k, model in enumerate(run["models"]):
            psr.append(evaluate_psr(model, dev_docs, cfg.threshold))
            members = make_windows([train_docs[i] for i in run["parts"][k]], cfg.model)
            mia.append(loss_threshold_attack(model, members, dev_windows, seed))
        keys = ("PSR", "token_precision", "token_recall", "ER_di", "ER_qi")
        out = {k: round(statistics.mean(p[k] for p in psr), 6) for k in keys}
        out.update({k: round(statistics.mean(m[k] for m in mia), 4) for k in ("mia_auc", "mia_tpr_at_1fpr")})
        out["mia_n_members"] = sum(m["mia_n_members"] for m in mia)
        out["n_entities"] = psr[0]["n_entities"]
        return out
    model = run["model"]
    res = evaluate_psr(model, dev_docs, cfg.threshold)
    members = make_windows(train_docs, cfg.model)
    res.update(loss_threshold_attack(model, members, dev_windows, seed))
    return res


def _pool_windows(ctx: CellContext, cfg: FedConfig) -> Tuple[Windows, np.ndarray, List[int], List[int]]:
    """The LiRA candidate pool (train ∪ dev windows), each window's document index, member / non-member ids."""
    docs = list(ctx.train_docs) + list(ctx.dev_docs)
    pool = make_windows(docs, cfg.model)
    index = {d.doc_id: i for i, d in enumerate(docs)}
    wdoc = np.array([index[d] for d in pool.doc_ids], dtype=np.int64)
    n_train = len(ctx.train_docs)
    return pool, wdoc, [i for i in range(len(pool)) if wdoc[i] < n_train], [i for i in range(len(pool)) if wdoc[i] >= n_train]


def _shadow_task(ctx: CellContext, kind: str, s: int, member_matrix: np.ndarray) -> Tuple[int, np.ndarray]:
    cfg = ctx.cfg_for(kind)
    pool, wdoc, _, _ = _pool_windows(ctx, cfg)
    return s, train_shadow(pool, wdoc, member_matrix[s], cfg.model, epochs=cfg.rounds * cfg.local_epochs, lr=cfg.lr,
                           batch_size=cfg.batch_size, seed=ATTACKER_SEED + s)


def run_cell(ctx: CellContext, kind: str, method: str, eps: float, seed: int, alpha: float,
             kd_mu: Optional[float] = None) -> Dict[str, Any]:
    """Train and evaluate one (model family, method, ε, seed, α) cell; returns its row (no model objects).

    ``kd_mu`` overrides the distillation confidence threshold μ (an ablation; the row's method is then
    ``<method>_mu<μ>``).
    """
    cfg = replace(ctx.cfg_for(kind), alpha=alpha)
    if kd_mu is not None:
        cfg = replace(cfg, kd=replace(cfg.kd, mu=kd_mu))
    dev_windows = make_windows(ctx.dev_docs, cfg.model)
    run = run_method(method, ctx.train_docs, cfg, seed, eps, proxy=ctx.proxy_for(kind))
    ev = evaluate_run(run, ctx.train_docs, ctx.dev_docs, dev_windows, cfg, seed)
    label = method if kd_mu is None else f"{method}_mu{kd_mu:g}"
    row: Dict[str, Any] = {"model": kind, "method": label, "epsilon": eps, "seed": seed, "alpha": alpha,
                           "train_seconds": round(run["seconds"], 1),
                           **{k: ev[k] for k in ("PSR", "token_precision", "token_recall", "ER_di", "ER_qi", "mia_auc",
                                                 "mia_tpr_at_1fpr", "mia_n_members", "n_entities")},
                           "privacy": run["privacy"]}
    refs = ctx.refs.get(kind)
    if refs is not None:
        pool, wdoc, mem, non = _pool_windows(ctx, cfg)
        if "models" in run:
            row.update(mean_over([lira_attack(m, pool, refs, [i for i in mem if wdoc[i] in set(run["parts"][k])], non,
                                              seed) for k, m in enumerate(run["models"])]))
        else:
            row.update(lira_attack(run["model"], pool, refs, mem, non, seed))
    if "kd" in run:
        row["kd"] = run["kd"]
    if kd_mu is not None:
        row["variant"] = {"kd_mu": kd_mu}
    return row


def _cpu_seconds() -> float:
    """CPU time (user + system) of this process and its finished worker processes: what the experiment costs on
    an otherwise idle machine, whatever else shares the cores."""
    import resource

    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return round(own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime, 1)


def _init_worker(threads: int) -> None:
    import logging
    import warnings

    import torch

    warnings.simplefilter("ignore")
    logging.getLogger().setLevel(logging.ERROR)
    torch.set_num_threads(threads)


def _run_tasks(tasks: Sequence[Tuple[Callable[..., Any], tuple]], workers: int, threads: int, desc: str,
               on_done: Optional[Callable[[Any], None]] = None) -> List[Any]:
    """Run ``fn(*args)`` for every task (in ``workers`` spawned processes when > 1); results in task order."""
    from tqdm import tqdm

    results: List[Any] = [None] * len(tasks)
    bar = tqdm(total=len(tasks), desc=desc, unit="task")
    if workers <= 1:
        for i, (fn, args) in enumerate(tasks):
            results[i] = fn(*args)
            if on_done:
                on_done(results[i])
            bar.update(1)
        bar.close()
        return results
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_init_worker, initargs=(threads,)) as ex:
        futs = {ex.submit(fn, *args): i for i, (fn, args) in enumerate(tasks)}
        pending = set(futs)
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for f in done:
                results[futs[f]] = f.result()
                if on_done:
                    on_done(results[futs[f]])
                bar.update(1)
    bar.close()
    return results


def teacher_quality(labeller: Any, dev_docs: Sequence[TabDocument], n: int, passage_tokens: int,
                    log: Callable[[str], None], min_tokens: int = 30) -> Dict[str, Any]:
    """The teacher scored against TAB gold on ``n`` dev passages (these labels train nothing)."""
    pairs = eval_passages(dev_docs, n, max_tokens=passage_tokens, min_tokens=min_tokens)
    results = labeller.label([(p.pid, p.text) for p, _ in pairs], log=log)
    masks = {r.passage_id: [[s, e] for s, e, _ in r.spans] for r in results}
    gold = [d for _, d in pairs]
    score = score_spans_on_gold(gold, masks)
    return {"scores": {k: score[k] for k in ("PSR", "ER_di", "ER_qi", "token_recall", "token_precision", "n_entities",
                                             "n_passages") if k in score},
            "gold_token_share": gold_token_share(gold), "summary": teacher_summary(results),
            "records": [r.to_record() for r in results]}


def run_experiment(train_path: str, dev_path: str, out_dir: str, *, background_path: Optional[str] = None,
                   spec: Optional[ExperimentSpec] = None, cfg: Optional[FedConfig] = None, labeller: Any = None,
                   log: Callable[[str], None] = print, export_dir: Optional[str] = None,
                   teacher_record: Optional[str] = None) -> Dict[str, Any]:
    """Run the experiment and write ``out_dir``: grid / α sweep / LiRA / teacher tables, rows JSON and plots.

    ``export_dir``: after the grid, retrain (seed of the first seed) and save there the best private detector
    at ε <= 10 (:func:`pick_best_private`) as ``federated_detector.pt`` and the non-private centralised model of
    the same family as ``centralized_detector.pt``.

    A distillation method needs ``labeller`` (a :class:`~.teacher.TeacherLabeller`) or ``teacher_record`` (a
    saved ``teacher_labels.json``, re-read against the public background text; the teacher is then not scored
    on dev unless a labeller is given too).
    """
    spec = spec or ExperimentSpec()
    cfg = cfg or FedConfig()
    t_all = time.perf_counter()
    load0 = os.getloadavg()
    train_docs = load_tab(train_path)[:spec.max_train_docs]
    dev_docs = load_tab(dev_path)[:spec.max_dev_docs]
    os.makedirs(out_dir, exist_ok=True)
    tasks_spec = plan_cells(spec, cfg.alpha)
    need_kd = any(parse_method(t[1]).distill for t in tasks_spec)
    timings: Dict[str, float] = {}
    proxy: Optional[ProxySet] = None
    teacher_meta: Dict[str, Any] = {}
    if need_kd:
        if labeller is None and teacher_record is None:
            raise ValueError("a distillation method is in the grid but neither a teacher labeller nor a teacher record was given")
        if not background_path:
            raise ValueError("a distillation method is in the grid but no public proxy text (background_path) was given")
        t = time.perf_counter()
        background = load_background(background_path)
        if teacher_record:
            passages, results, pinfo = load_teacher_record(teacher_record, background)
            teacher_meta = {"teacher": _recorded_teacher(teacher_record), "proxy": pinfo,
                            "answers": f"recorded ({os.path.basename(teacher_record)}), not asked again"}
        else:
            passages, pinfo = proxy_passages(background, list(train_docs) + list(dev_docs), spec.n_proxy,
                                             max_tokens=spec.passage_tokens, min_tokens=spec.passage_min_tokens)
            if len(passages) < spec.n_proxy:
                log(f"note: only {len(passages)} public passages available (asked for {spec.n_proxy})")
            results = labeller.label([(p.pid, p.text) for p in passages], log=log)
            teacher_meta = {"teacher": labeller.describe(), "proxy": pinfo}
        private_ids = {d.doc_id for d in list(train_docs) + list(dev_docs)}
        if any(p.source in private_ids for p in passages):
            raise ValueError("a proxy passage comes from a client or dev document; the proxy set must be public text")
        proxy = build_proxy_set(passages, results, cfg.model, pinfo)
        proxies = {kind: build_proxy_set(passages, results, cfg.with_model(kind).model, pinfo) for kind in spec.models}
        timings["teacher_proxy_seconds"] = round(time.perf_counter() - t, 1)
        teacher_meta["proxy_summary"] = teacher_summary(results)
        if labeller is not None and spec.n_teacher_eval:
            t = time.perf_counter()
            teacher_meta["dev_quality"] = teacher_quality(labeller, dev_docs, spec.n_teacher_eval, spec.passage_tokens,
                                                          log, spec.passage_min_tokens)
            timings["teacher_dev_seconds"] = round(time.perf_counter() - t, 1)
        if labeller is not None:
            teacher_meta["llm_calls"] = dict(labeller.calls)
        labels_out = os.path.join(out_dir, "teacher_labels.json")
        if teacher_record and os.path.abspath(teacher_record) == os.path.abspath(labels_out):
            log("teacher: the recorded answers in the output directory are reused; its teacher files are kept")
        else:
            with open(labels_out, "w", encoding="utf-8") as fh:
                json.dump({"teacher": teacher_meta.get("teacher"), "proxy": pinfo,
                           "passages": [{"pid": p.pid, "source": p.source, "start": p.start, "end": p.end}
                                        for p in passages],
                           "records": [r.to_record() for r in results]}, fh, indent=1, ensure_ascii=False)
            write_teacher_report(out_dir, teacher_meta)
        log(f"teacher: {teacher_meta['proxy_summary']}")
    if "minilm" in spec.models:
        t = time.perf_counter()
        from .encoder import warm_cache

        texts = [d.text for d in list(train_docs) + list(dev_docs)]
        n = warm_cache(texts, tokenize, cfg.with_model("minilm").model.window, log=log)
        timings["encoder_features_seconds"] = round(time.perf_counter() - t, 1)
        log(f"MiniLM token vectors: {n} of {len(texts)} texts encoded now (the rest from the cache)")
    ctx = CellContext(list(train_docs), list(dev_docs), proxy, {}, cfg, proxies if need_kd else {})
    if spec.n_shadows:
        t = time.perf_counter()
        matrix = shadow_membership(len(train_docs) + len(dev_docs), spec.n_shadows, ATTACKER_SEED)
        shadow_tasks = [(kind, s) for kind in spec.models for s in range(spec.n_shadows)]  # one pool for all families
        log(f"LiRA: {len(shadow_tasks)} shadow models ({spec.n_shadows} per family)")
        out = _run_tasks([(_shadow_task, (ctx, kind, s, matrix)) for kind, s in shadow_tasks], spec.workers,
                         spec.threads_per_worker, "LiRA shadows")
        for kind in spec.models:
            _, wdoc, _, _ = _pool_windows(ctx, ctx.cfg_for(kind))
            losses = np.stack([o[1] for (k, _), o in zip(shadow_tasks, out) if k == kind])  # task order: shadow 0, 1, ...
            ctx.refs[kind] = ShadowRefs(losses, matrix[:, wdoc])
        timings["shadows_seconds"] = round(time.perf_counter() - t, 1)
    rows: List[Dict[str, Any]] = []
    meta: Dict[str, Any] = {"config": asdict(cfg), "spec": asdict(spec), "seeds": list(spec.seeds),
                            "n_cells": len(tasks_spec),
                            "models": {k: asdict(ctx.cfg_for(k).model) for k in spec.models},
                            "n_train_docs": len(train_docs), "n_dev_docs": len(dev_docs),
                            "n_dev_windows": len(make_windows(dev_docs, cfg.model)), "main_alpha": cfg.alpha,
                            "workers": spec.workers, "threads_per_worker": spec.threads_per_worker,
                            "cpu_count": os.cpu_count(), "loadavg_start": [round(v, 2) for v in load0],
                            "mia_untrained_reference": {}, "lira_untrained_reference": {}}
    for kind in spec.models:
        mcfg = ctx.cfg_for(kind).model
        meta["mia_untrained_reference"][kind] = {str(s): loss_threshold_attack(
            new_model(mcfg, s), make_windows(train_docs, mcfg), make_windows(dev_docs, mcfg), s) for s in spec.seeds}
        if kind in ctx.refs:
            # LiRA against the untrained initial model: what the attack reports for a model that learnt nothing
            # (train and dev windows differ in content, and the shadows' IN/OUT gap differs per window)
            pool, _, mem, non = _pool_windows(ctx, ctx.cfg_for(kind))
            meta["lira_untrained_reference"][kind] = {
                str(s): lira_attack(new_model(mcfg, s), pool, ctx.refs[kind], mem, non, s) for s in spec.seeds}
    meta["everything_precision"] = everything_precision(dev_docs)
    t_cells = time.perf_counter()
    cost_total = sum(cell_cost(t[1]) for t in tasks_spec)
    cost_done = [0.0]
    log(f"grid: {len(tasks_spec)} cells ({len({t[:3] + (t[4], t[5]) for t in tasks_spec})} model x method x ε x α "
        f"rows), {time.perf_counter() - t_all:.0f} s elapsed before the cells")

    def done(row: Dict[str, Any]) -> None:
        rows.append(row)
        cost_done[0] += cell_cost(str(row["method"]))
        log(f"[{time.perf_counter() - t_all:7.1f}s] {row['model']:10s} {row['method']:22s} eps={row['epsilon']:<5} a={row['alpha']:<4} "
            f"seed={row['seed']} PSR={row['PSR']:.3f} tokP={row['token_precision']:.3f} MIA={row['mia_auc']:.3f} "
            f"LiRA={row.get('lira_online_auc', float('nan')):.3f} | "
            + progress_line(len(rows), len(tasks_spec), time.perf_counter() - t_cells, cost_done[0], cost_total))
        meta.update(wall_seconds=round(time.perf_counter() - t_all, 1), timings=timings, complete=False)
        dump_results(out_dir, rows, meta, teacher_meta, plots=False)

    _run_tasks([(run_cell, (ctx, *task)) for task in tasks_spec], spec.workers, spec.threads_per_worker,
               "grid cells", on_done=done)
    timings["cells_seconds"] = round(time.perf_counter() - t_cells, 1)
    if export_dir:
        t = time.perf_counter()
        meta["exported"] = export_models(ctx, rows, export_dir, spec.seeds[0], log)
        timings["export_seconds"] = round(time.perf_counter() - t, 1)
    meta.update(wall_seconds=round(time.perf_counter() - t_all, 1), timings=timings, complete=True,
                loadavg_end=[round(v, 2) for v in os.getloadavg()], cpu_seconds=_cpu_seconds())
    dump_results(out_dir, rows, meta, teacher_meta, plots=True)
    return {"rows": rows, "meta": meta, "teacher": teacher_meta}


def _recorded_teacher(path: str) -> Any:
    """The teacher a saved ``teacher_labels.json`` names (endpoint kind, model, prompt version, generation)."""
    with open(path, encoding="utf-8") as fh:
        return json.load(fh).get("teacher")


def everything_precision(dev_docs: Sequence[TabDocument]) -> float:
    """TAB token precision of a detector that masks every token of dev (the floor a mask-all row sits on)."""
    from ..metrics.psr import psr_scores
    from .simulation import gold_view

    return float(psr_scores([gold_view(d) for d in dev_docs], [[[0, len(d.text)]] for d in dev_docs])["token_precision"])


def pick_best_private(rows: Sequence[Dict[str, Any]], max_epsilon: float = 10.0,
                      min_precision: float = 0.6) -> Optional[Tuple[str, str, float]]:
    """(model, method, ε) of the DP cell at the main α with ε <= ``max_epsilon`` and the highest mean PSR among
    those with mean token precision >= ``min_precision`` (None if no cell qualifies)."""
    best: Optional[Tuple[float, Tuple[str, str, float]]] = None
    for key in _keys(rows):
        model, method, eps = key
        if not (math.isfinite(eps) and eps <= max_epsilon) or "_mu" in method:
            continue
        rs = [r for r in rows if _key(r) == key and not r.get("variant")]
        prec = [float(r["token_precision"]) for r in rs if r["token_precision"] == r["token_precision"]]
        if not rs or not prec or statistics.mean(prec) < min_precision:
            continue
        psr = statistics.mean(float(r["PSR"]) for r in rs)
        if best is None or psr > best[0]:
            best = (psr, key)
    return best[1] if best else None


def export_models(ctx: CellContext, rows: Sequence[Dict[str, Any]], out_dir: str, seed: int,
                  log: Callable[[str], None]) -> Dict[str, Any]:
    """Retrain and save the best private cell (``federated_detector.pt``, read by ``--detector federated``) and the
    centralised model of the same family (``centralized_detector.pt``), both with the given seed."""
    from .recognizer import CENTRALIZED_FILE, MODEL_FILE

    main = [r for r in rows if float(r.get("alpha", ctx.cfg.alpha)) == ctx.cfg.alpha]
    best = pick_best_private(main)
    if best is None:
        log("export: no DP cell at ε <= 10 reaches token precision 0.6; nothing exported")
        return {}
    kind, method, eps = best
    out: Dict[str, Any] = {}
    for fname, (m, e) in ((MODEL_FILE, (method, eps)), (CENTRALIZED_FILE, ("centralized", math.inf))):
        cfg = ctx.cfg_for(kind)
        run = run_method(m, ctx.train_docs, cfg, seed, e, proxy=ctx.proxy_for(kind))
        path = os.path.join(out_dir, fname)
        os.makedirs(out_dir, exist_ok=True)
        ev = evaluate_psr(run["model"], ctx.dev_docs, cfg.threshold)
        meta = {"model": kind, "method": m, "epsilon": e, "seed": seed, "alpha": cfg.alpha, "threshold": cfg.threshold,
                "privacy": run["privacy"], "dev_PSR": ev["PSR"], "dev_token_precision": ev["token_precision"]}
        save_model(run["model"], path, meta)
        out[fname] = {k: v for k, v in meta.items() if k != "privacy"}
        log(f"export: {path} ({kind} {m} ε={e}: dev PSR {ev['PSR']:.3f}, token precision {ev['token_precision']:.3f})")
    return out


# --- tables and plots ------------------------------------------------------------------------------------------

def dump_results(out_dir: str, rows: Sequence[Dict[str, Any]], meta: Dict[str, Any], teacher: Dict[str, Any],
                 plots: bool) -> None:
    """``grid_rows.json``, ``grid.{csv,md}``, ``alpha_sweep.md``, ``lira.md`` (and the plots)."""
    with open(os.path.join(out_dir, "grid_rows.json"), "w", encoding="utf-8") as fh:
        json.dump({"meta": meta, "rows": list(rows)}, fh, indent=1, default=str)
    write_tables(out_dir, rows, meta)
    if plots and rows:
        plot_grid(_main_rows(rows, meta), out_dir)
        if len({float(r.get("alpha", 1.0)) for r in rows}) > 1:
            plot_alpha(rows, out_dir)


def _main_rows(rows: Sequence[Dict[str, Any]], meta: Dict[str, Any]) -> List[Dict[str, Any]]:
    a = float(meta.get("main_alpha", 1.0))
    return [r for r in rows if float(r.get("alpha", a)) == a]


def write_tables(out_dir: str, rows: Sequence[Dict[str, Any]], meta: Dict[str, Any]) -> None:
    """``grid.csv`` and ``grid.md`` (main α), ``alpha_sweep.md`` and ``lira.md`` when there is something to show."""
    main = _main_rows(rows, meta)
    if not main:
        return
    table = summarize(main, meta.get("everything_precision"))
    with open(os.path.join(out_dir, "grid.csv"), "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(dict.fromkeys(c for r in table for c in r)))
        w.writeheader()
        w.writerows(table)
    with open(os.path.join(out_dir, "grid.md"), "w", encoding="utf-8") as fh:
        fh.write(markdown_table(table, meta))
    sweep = alpha_table(rows)
    if sweep:
        with open(os.path.join(out_dir, "alpha_sweep.md"), "w", encoding="utf-8") as fh:
            fh.write(sweep)
    if any("lira_auc" in r for r in main):
        with open(os.path.join(out_dir, "lira.md"), "w", encoding="utf-8") as fh:
            fh.write(lira_table(main, meta))
    if any(r.get("kd") for r in main):
        with open(os.path.join(out_dir, "kd.md"), "w", encoding="utf-8") as fh:
            fh.write(kd_table(main))


def _mean_sd(vals: Iterable[float]) -> str:
    """``mean ± sd``; values that are NaN (e.g. token precision of a model that masks nothing) are left out and
    the number of values used is shown as ``(n=k)``."""
    allv = [x for x in vals if x is not None]
    v = [float(x) for x in allv if x == x]
    if not v:
        return "nan"
    return (f"{statistics.mean(v):.3f}" + (f" ± {statistics.stdev(v):.3f}" if len(v) > 1 else "")
            + (f" (n={len(v)})" if len(v) < len(allv) else ""))


def _auc_text(rs: Sequence[Dict[str, Any]], key: str) -> str:
    """An attack AUC: ``mean ± sd`` over seeds, or for a one-seed row the AUC with its 95% interval over the
    attacked windows (``key + "_ci95"``, Hanley-McNeil) as ``0.566 [0.497, 0.635]``."""
    if len(rs) == 1 and rs[0].get(key + "_ci95") and rs[0].get(key) == rs[0].get(key):
        lo, hi = rs[0][key + "_ci95"]
        return f"{float(rs[0][key]):.3f} [{float(lo):.3f}, {float(hi):.3f}]"
    return _mean_sd(r.get(key) for r in rs)


def _span_of(vals: Sequence[Any], infinite: bool) -> str:
    """One value, or ``min-max`` when seeds differ (δ = 1/|S| follows each seed's client split)."""
    v = sorted({float(x) for x in vals if x not in (None, "")})
    if not v:
        return "inf" if infinite else ""
    return f"{v[0]:g}" if len(v) == 1 else f"{v[0]:g}-{v[-1]:g}"


def _key(r: Dict[str, Any]) -> Tuple[str, str, float]:
    """(model family, method, ε) of a row; rows from before the model column are ``hashed_cnn``."""
    return (str(r.get("model", "hashed_cnn")), r["method"], float(r["epsilon"]))


def _keys(rows: Sequence[Dict[str, Any]]) -> List[Tuple[str, str, float]]:
    keys = list(dict.fromkeys(_key(r) for r in rows))
    return sorted(keys, key=lambda k: (_model_order(k[0]), _method_order(k[1]), k[2]))


def _model_order(kind: str) -> int:
    return MODEL_KINDS.index(kind) if kind in MODEL_KINDS else 99


def _method_order(m: str) -> Tuple[int, str]:
    """METHODS order; an ablation ``<method>_mu<μ>`` right after its method."""
    base = next((b for b in sorted(METHODS, key=len, reverse=True) if m == b or m.startswith(b + "_mu")), m)
    return (METHODS.index(base) if base in METHODS else 99, m)


def _eps_label(e: float) -> str:
    return "inf" if math.isinf(e) else f"{e:g}"


def verdict(rows: Sequence[Dict[str, Any]], everything: Optional[float]) -> str:
    """``tags everything`` (mean token precision within 1.5x of a mask-all detector's), ``tags almost nothing``
    (mean PSR < 0.05) or ''."""
    prec = [float(r["token_precision"]) for r in rows if r["token_precision"] == r["token_precision"]]
    psr = statistics.mean(float(r["PSR"]) for r in rows)
    if everything and prec and statistics.mean(prec) <= 1.5 * everything:
        return "tags everything"
    if psr < 0.05:
        return "tags almost nothing"
    return ""


def summarize(rows: Sequence[Dict[str, Any]], everything: Optional[float] = None) -> List[Dict[str, Any]]:
    """One row per (model family, method, ε): mean ± sd over seeds."""
    out: List[Dict[str, Any]] = []
    for key in _keys(rows):
        kind, m, e = key
        rs = [r for r in rows if _key(r) == key]
        paper = [r["privacy"].get("epsilon_per_round_paper") for r in rs]
        row = {
            "model": kind, "method": m, "epsilon_target": "inf" if math.isinf(e) else e,
            "epsilon_per_round_paper": _span_of(paper, False) if any(p not in (None, "") for p in paper) else "",
            "epsilon_total_accounted": _span_of([r["privacy"].get("epsilon_total_rdp") for r in rs], math.isinf(e)),
            "PSR": _mean_sd(r["PSR"] for r in rs), "token_precision": _mean_sd(r["token_precision"] for r in rs),
            "note": verdict(rs, everything),
            "mia_auc": _mean_sd(r["mia_auc"] for r in rs), "mia_tpr_at_1fpr": _mean_sd(r["mia_tpr_at_1fpr"] for r in rs),
        }
        if any("lira_online_auc" in r for r in rs):
            row["lira_auc"] = _auc_text(rs, "lira_online_auc")
            row["lira_tpr_at_1fpr"] = _mean_sd(r.get("lira_online_tpr_at_1fpr") for r in rs)
        row.update({"seeds": len(rs), "train_seconds": round(statistics.mean(r["train_seconds"] for r in rs), 1)})
        out.append(row)
    return out


def _reference_text(ref: Dict[str, Any], field_names: Sequence[str]) -> str:
    """Per family and seed, the attack figures against the untrained initial model (``{family: {seed: {...}}}``;
    an entry ``{seed: {...}}`` from before the model families is shown as it is)."""
    parts = []
    for key, entry in sorted(ref.items()):
        if not isinstance(entry, dict):
            continue
        if any(f in entry for f in field_names):
            parts.append(f"seed {key}: " + " / ".join(str(entry.get(f)) for f in field_names))
        else:
            parts.append(f"{key}: " + ", ".join(f"seed {s}: " + " / ".join(str(v.get(f)) for f in field_names)
                                                 for s, v in sorted(entry.items()) if isinstance(v, dict)))
    return "; ".join(parts)


def markdown_table(table: Sequence[Dict[str, Any]], meta: Dict[str, Any]) -> str:
    """The table in Markdown, preceded by what was run."""
    cols = list(dict.fromkeys(c for r in table for c in r))
    lines = [f"Seeds {meta['seeds']}; Dirichlet α = {meta.get('main_alpha', 1.0)}; train docs {meta['n_train_docs']} "
             f"(clients), dev docs {meta['n_dev_docs']} (PSR over the dev DIRECT+QUASI entities); MIA on "
             f"{meta['n_dev_windows']} dev windows as non-members vs as many member windows; the seeds column: "
             "how many seeds a row ran (values are mean ± sd over them; a one-seed row's LiRA AUC carries its 95% "
             "interval over the attacked windows, Hanley-McNeil); "
             f"wall time of the whole experiment {meta.get('wall_seconds')} s "
             f"({meta.get('workers', 1)} worker process(es) x {meta.get('threads_per_worker', 1)} torch thread(s); "
             f"phases {meta.get('timings', {})}; CPU time {meta.get('cpu_seconds')} s; load average at start "
             f"{meta.get('loadavg_start')}, at end {meta.get('loadavg_end')}).",
             f"A detector masking every dev token has token precision {meta.get('everything_precision')}; note "
             "'tags everything' = mean token precision within 1.5x of that.",
             "MIA AUC of the untrained initial model (reference): "
             + _reference_text(meta.get("mia_untrained_reference") or {}, ("mia_auc",)) + ".", "",
             "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(str(r.get(c, "")) for c in cols) + " |" for r in table]
    return "\n".join(lines) + "\n"


def _sweep_cells(rows: Sequence[Dict[str, Any]]) -> List[Tuple[str, str, float]]:
    return [k for k in _keys(rows) if len({float(r.get("alpha", 1.0)) for r in rows if _key(r) == k}) > 1]


def alpha_table(rows: Sequence[Dict[str, Any]]) -> str:
    """PSR / token precision / loss-MIA AUC per sweep cell and α (mean ± sd over seeds); '' without a sweep."""
    alphas = sorted({float(r.get("alpha", 1.0)) for r in rows})
    if len(alphas) < 2:
        return ""
    head = ["model", "method", "epsilon"] + [f"α={a:g}: PSR / tokP / MIA AUC" for a in alphas] + ["seeds"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key in _sweep_cells(rows):
        cols = [key[0], key[1], _eps_label(key[2])]
        n = set()
        for a in alphas:
            rs = [r for r in rows if _key(r) == key and float(r.get("alpha", 1.0)) == a]
            n.add(len(rs))
            cols.append(" / ".join(_mean_sd(r[k] for r in rs) for k in ("PSR", "token_precision", "mia_auc")) if rs else "")
        cols.append("/".join(str(x) for x in sorted(n)))
        lines.append("| " + " | ".join(cols) + " |")
    return "\n".join(lines) + "\n"


def lira_table(rows: Sequence[Dict[str, Any]], meta: Dict[str, Any]) -> str:
    """Offline and online LiRA per (model, method, ε), mean ± sd over seeds, with the loss-threshold attack beside."""
    ref = meta.get("lira_untrained_reference") or {}
    intro = ("LiRA against the untrained initial model (reference; offline / online AUC): "
             + _reference_text(ref, ("lira_auc", "lira_online_auc")) + ".\n\n") if ref else ""
    head = ["model", "method", "epsilon", "ε total", "LiRA offline AUC", "offline TPR@1%FPR", "LiRA online AUC",
            "online TPR@1%FPR", "loss-threshold AUC", "n member = n non-member", "shadows", "seeds"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key in _keys(rows):
        rs = [r for r in rows if _key(r) == key and "lira_auc" in r]
        if not rs:
            continue
        lines.append("| " + " | ".join([
            key[0], key[1], _eps_label(key[2]),
            _span_of([r["privacy"].get("epsilon_total_rdp") for r in rs], math.isinf(key[2])),
            _auc_text(rs, "lira_auc"), _mean_sd(r["lira_tpr_at_1fpr"] for r in rs),
            _auc_text(rs, "lira_online_auc"), _mean_sd(r["lira_online_tpr_at_1fpr"] for r in rs),
            _mean_sd(r["mia_auc"] for r in rs), _span_of([r["lira_online_n_each"] for r in rs], False),
            str(rs[0]["lira_n_shadows"]), str(len(rs))]) + " |")
    return intro + "\n".join(lines) + "\n"


def kd_table(rows: Sequence[Dict[str, Any]]) -> str:
    """What the distillation steps kept: per (model, method, ε), means over seeds of each KD step (rounds 2, 4, ...)."""
    head = ["model", "method", "epsilon", "KD steps", "proxy tokens", "teacher entity tokens", "kept tokens per step",
            "kept entity tokens per step", "steps that trained", "seeds"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key in _keys(rows):
        rs = [r for r in rows if _key(r) == key and r.get("kd")]
        if not rs:
            continue
        n_steps = len(rs[0]["kd"])
        per_step = lambda name: " / ".join(  # noqa: E731
            f"{statistics.mean(r['kd'][i][name] for r in rs):.0f}" for i in range(n_steps))
        trained = sum(sum(1 for k in r["kd"] if k.get("trained")) for r in rs)
        lines.append("| " + " | ".join([
            key[0], key[1], _eps_label(key[2]), str(n_steps), str(rs[0]["kd"][0]["tokens"]),
            str(rs[0]["kd"][0]["teacher_entity"]), per_step("kept"), per_step("kept_entity"),
            f"{trained} of {n_steps * len(rs)}", str(len(rs))]) + " |")
    return "\n".join(lines) + "\n"


def write_teacher_report(out_dir: str, teacher: Dict[str, Any]) -> None:
    """``teacher.json`` (without per-passage records) and ``teacher.md``."""
    slim = {k: v for k, v in teacher.items() if k != "dev_quality"}
    dq = teacher.get("dev_quality")
    if dq:
        slim["dev_quality"] = {k: v for k, v in dq.items() if k != "records"}
        with open(os.path.join(out_dir, "teacher_dev_eval.json"), "w", encoding="utf-8") as fh:
            json.dump(dq["records"], fh, indent=1, ensure_ascii=False)
    with open(os.path.join(out_dir, "teacher.json"), "w", encoding="utf-8") as fh:
        json.dump(slim, fh, indent=1, ensure_ascii=False, default=str)
    ps = teacher.get("proxy_summary", {})
    lines = [f"Teacher: {teacher.get('teacher')}", "",
             f"Proxy set: {ps.get('passages')} public passages ({teacher.get('proxy', {}).get('n_tokens')} tokens), "
             f"{ps.get('parsed')} answers parsed, {ps.get('malformed')} malformed (no labels); "
             f"{ps.get('tokens_labelled')} of {ps.get('tokens')} tokens labelled as identifiers "
             f"({ps.get('share_labelled')}); strings returned {ps.get('items')}; by type {ps.get('labelled_tokens_by_type')}."]
    if dq:
        s = dq["scores"]
        lines += ["", f"Against TAB gold on {s.get('n_passages')} dev passages ({s.get('n_entities')} DIRECT+QUASI "
                      f"entities; these labels train nothing): PSR {s.get('PSR')}, ER_di {s.get('ER_di')}, "
                      f"ER_qi {s.get('ER_qi')}, token recall {s.get('token_recall')}, token precision "
                      f"{s.get('token_precision')} (a tagger marking every token would have precision "
                      f"{dq.get('gold_token_share')}); {dq['summary'].get('malformed')} malformed answers."]
    with open(os.path.join(out_dir, "teacher.md"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")


def plot_grid(rows: Sequence[Dict[str, Any]], out_dir: str) -> List[str]:
    """``psr_vs_epsilon.png`` (PSR, token precision) and ``mia_vs_epsilon.png`` (loss-threshold and LiRA), one
    line per (model family, method); MiniLM solid, hashed CNN dashed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = {1.0: 0, 10.0: 1, math.inf: 2}
    lines_of = list(dict.fromkeys((k[0], k[1]) for k in _keys(rows)))
    has_lira = any("lira_online_auc" in r for r in rows)
    mia_panels: Tuple[Tuple[str, str], ...] = (("mia_auc", "loss-threshold MIA AUC"), ("mia_tpr_at_1fpr", "loss-threshold TPR at 1% FPR"))
    if has_lira:
        mia_panels += (("lira_online_auc", "LiRA (online) AUC"), ("lira_online_tpr_at_1fpr", "LiRA (online) TPR at 1% FPR"))
    files = []
    methods = list(dict.fromkeys(m for _, m in lines_of))
    for fname, panels in (("psr_vs_epsilon.png", (("PSR", "PSR (entity recall, DIRECT+QUASI)"),
                                                   ("token_precision", "TAB token precision"))),
                          ("mia_vs_epsilon.png", mia_panels)):
        rows_n = 2 if len(panels) > 2 else 1
        fig, axes = plt.subplots(rows_n, 2, figsize=(12, 4.6 * rows_n), squeeze=False)
        for ax, (key, label) in zip(axes.flatten(), panels):
            for i, (kind, m) in enumerate(lines_of):
                pts = []
                for e in sorted({float(r["epsilon"]) for r in rows if _key(r)[:2] == (kind, m)}):
                    v = [float(r[key]) for r in rows if _key(r) == (kind, m, e) and key in r
                         and float(r[key]) == float(r[key])]
                    if v:
                        pts.append((xs.get(e, 2) + (i - len(lines_of) / 2) * 0.02, statistics.mean(v),
                                    statistics.stdev(v) if len(v) > 1 else 0.0))
                if pts:
                    c = methods.index(m)
                    ax.errorbar([p[0] for p in pts], [p[1] for p in pts], yerr=[p[2] for p in pts],
                                marker="osD^v<>ph*XP"[c % 11], color=plt.get_cmap("tab20")(c % 20), capsize=3,
                                label=f"{m} ({kind})", linestyle=("-" if kind == "minilm" else "--") if len(pts) > 1 else "none")
            if key.endswith("auc"):
                ax.axhline(0.5, color="grey", lw=0.8, ls="--")
            ax.set_xticks([0, 1, 2], ["ε=1", "ε=10", "ε=∞ (no DP)"])
            ax.set_ylabel(label)
            ax.set_ylim(0, 1.02)
        axes.flatten()[0].legend(fontsize=6, ncol=2)
        fig.suptitle("Federated detector on TAB dev, mean ± sd over seeds (ε: target over all rounds; "
                     "*_paper rows: the paper's per-round ε)", fontsize=9)
        fig.tight_layout()
        path = os.path.join(out_dir, fname)
        fig.savefig(path, dpi=100)
        plt.close(fig)
        files.append(path)
    return files


def plot_alpha(rows: Sequence[Dict[str, Any]], out_dir: str) -> str:
    """``alpha_sweep.png``: PSR and token precision against the Dirichlet α for the sweep cells."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    alphas = sorted({float(r.get("alpha", 1.0)) for r in rows})
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    for ax, name in zip(axes, ("PSR", "token_precision")):
        for key in _sweep_cells(rows):
            pts = []
            for a in alphas:
                v = [float(r[name]) for r in rows if _key(r) == key and float(r.get("alpha", 1.0)) == a
                     and float(r[name]) == float(r[name])]
                if v:
                    pts.append((a, statistics.mean(v), statistics.stdev(v) if len(v) > 1 else 0.0))
            ax.errorbar([p[0] for p in pts], [p[1] for p in pts], yerr=[p[2] for p in pts], marker="o", capsize=3,
                        label=f"{key[1]} ε={'∞' if math.isinf(key[2]) else f'{key[2]:g}'} ({key[0]})",
                        linestyle="-" if key[0] == "minilm" else "--")
        ax.set_xscale("log")
        ax.set_xlabel("Dirichlet α of the client split (small = skewed)")
        ax.set_ylabel(name)
        ax.set_ylim(0, 1.02)
    axes[0].legend(fontsize=6)
    fig.tight_layout()
    path = os.path.join(out_dir, "alpha_sweep.png")
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def merge_results(dirs: Sequence[str], out_dir: str) -> List[Dict[str, Any]]:
    """Merge the ``grid_rows.json`` of several runs into one set. A cell (model, method, ε, seed, α, variant) that
    a later directory also holds is taken from the later one (a re-run replaces the rows it recomputed); the
    number replaced is recorded per part."""
    by_cell: Dict[Tuple[Any, ...], Dict[str, Any]] = {}
    replaced: List[int] = []
    metas = []
    for d in dirs:
        path = os.path.join(d, "grid_rows.json")
        try:
            with open(path, encoding="utf-8") as fh:
                blob = json.load(fh)
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"{path}: cannot read grid rows ({exc})") from None
        metas.append(blob["meta"])
        n_replaced = 0
        for r in blob["rows"]:
            r["epsilon"] = float(r["epsilon"])
            cell = (r["model"], r["method"], r["epsilon"], int(r["seed"]), float(r["alpha"]),
                    json.dumps(r.get("variant"), sort_keys=True))
            n_replaced += cell in by_cell
            by_cell[cell] = r
        replaced.append(n_replaced)
    rows = list(by_cell.values())
    meta = dict(metas[0])
    meta["wall_seconds"] = max(m["wall_seconds"] for m in metas)
    meta["seeds"] = sorted({int(r["seed"]) for r in rows})
    for name in ("mia_untrained_reference", "lira_untrained_reference"):
        ref: Dict[str, Any] = {}
        for m in metas:
            ref.update(m.get(name) or {})
        meta[name] = ref
    meta["parts"] = [{"dir": os.path.basename(os.path.normpath(d)), "wall_seconds": m["wall_seconds"],
                      "cpu_seconds": m.get("cpu_seconds"), "complete": m.get("complete"),
                      "models": sorted(m.get("models") or ["hashed_cnn"]),
                      "methods": list((m.get("spec") or {}).get("methods") or []),
                      "n_shadows": (m.get("spec") or {}).get("n_shadows"), "replaced_earlier_rows": k,
                      **({"parts": m["parts"]} if m.get("parts") else {})}
                     for d, m, k in zip(dirs, metas, replaced)]
    os.makedirs(out_dir, exist_ok=True)
    dump_results(out_dir, rows, meta, {}, plots=True)
    return rows


def export_detector(train_path: str, out_file: str, *, method: str = "fedavg", epsilon: float = math.inf,
                    seed: int = 0, cfg: Optional[FedConfig] = None, proxy: Optional[ProxySet] = None) -> Dict[str, Any]:
    """Train one detector and save it where :class:`FederatedRecognizer` reads it."""
    cfg = cfg or FedConfig()
    run = run_method(method, load_tab(train_path), cfg, seed, epsilon, proxy=proxy)
    if "model" not in run:
        raise ValueError(f"method '{method}' produces one model per client; export a federated or centralized method")
    meta = {"model": cfg.model.kind, "method": method, "epsilon": epsilon, "seed": seed, "threshold": cfg.threshold,
            "privacy": run["privacy"], "train_seconds": round(run["seconds"], 1)}
    os.makedirs(os.path.dirname(os.path.abspath(out_file)), exist_ok=True)
    save_model(run["model"], out_file, meta)
    return meta
