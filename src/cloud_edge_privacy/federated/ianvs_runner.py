"""Our driver of a ``federatedlearning`` benchmarkingjob YAML with Ianvs 1d3da5b's semantics (LLM mode).

Same sequence as ``FederatedLearning.run`` there (read under real Ianvs, see the example README):
one deep copy of the ``basemodel`` estimator per client; the training JSONL split evenly at random
into ``client_number`` partitions; per round, clients trained one after another with
``train((x, y), None, device_id=0, client_id=k)``, their ``get_weights()`` collected with
``num_samples`` and handed to ``aggregate``; the result sent to every client with ``set_weights``;
finally ``predict`` on client 0 over the test texts and the testenv metrics on (answers, predictions).
Unlike Ianvs, the random split is seeded (the basemodel's ``seed``), so a run is reproducible.
"""
from __future__ import annotations

import copy
import csv
import itertools
import json
import os
import time
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from ..errors import ConfigError
from ..bench.ianvs_config import load_testenv, load_yaml
from ..bench.module_loader import import_module_file
from ..registry import ClassFactory, ClassType

_FL_AGG = getattr(ClassType, "FL_AGG", "aggregation")


class _AggClient:
    """Stand-in for Sedna's ``AggClient`` (num_samples, weights)."""

    def __init__(self, num_samples: int, weights: Any) -> None:
        self.num_samples = num_samples
        self.weights = weights


def prepare_data(out_dir: str, train_path: str, dev_path: str, limit_train: Optional[int] = None,
                 limit_dev: Optional[int] = None) -> Dict[str, str]:
    """Write ``tab_{train,dev}.jsonl`` and their ``_smoke`` cuts (question = text, answer = gold JSON) into ``out_dir``."""
    from ..datasets.tab import load_tab
    from .ianvs_modules import to_record

    os.makedirs(out_dir, exist_ok=True)
    out = {}
    files = (("tab_train.jsonl", train_path, limit_train), ("tab_dev.jsonl", dev_path, limit_dev),
             ("tab_train_smoke.jsonl", train_path, 6), ("tab_dev_smoke.jsonl", dev_path, 3))
    for name, path, lim in files:
        dst = os.path.join(out_dir, name)
        with open(dst, "w", encoding="utf-8") as fh:
            for d in load_tab(path)[:lim]:
                fh.write(json.dumps(to_record(d), ensure_ascii=False) + "\n")
        out[name] = dst
    return out


def _read_jsonl(path: str) -> List[Dict[str, Any]]:
    if not os.path.isfile(path):
        raise ConfigError(f"{path}: data file not found; write it with `python scripts/run_federated_bench.py --prepare-ianvs-data`")
    with open(path, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    for i, r in enumerate(rows):
        if "question" not in r or "answer" not in r:
            raise ConfigError(f"{path}: line {i + 1} needs 'question' and 'answer'")
    return rows


def _expand(path: str, module: Dict[str, Any]) -> List[Dict[str, Any]]:
    hps = module.get("hyperparameters") or []
    names, vals = [], []
    for item in hps:
        if not isinstance(item, dict) or len(item) != 1:
            raise ConfigError(f"{path}: module '{module.get('name')}': each hyperparameter must be a one-key mapping")
        (k, spec), = item.items()
        v = spec.get("values") if isinstance(spec, dict) else None
        if not isinstance(v, list) or not v:
            raise ConfigError(f"{path}: module '{module.get('name')}', hyperparameter '{k}': 'values' must be a non-empty list")
        names.append(k)
        vals.append(v)
    return [dict(zip(names, c)) for c in itertools.product(*vals)]


def _load_fl_algorithm(path: str) -> Dict[str, Any]:
    sec = load_yaml(path, "algorithm")
    if sec.get("paradigm_type") != "federatedlearning":
        raise ConfigError(f"{path}: paradigm_type must be 'federatedlearning', got {sec.get('paradigm_type')!r}")
    mods = {m.get("type"): m for m in sec.get("modules") or [] if isinstance(m, dict)}
    for req in ("basemodel", "aggregation"):
        if req not in mods or not mods[req].get("url") or not mods[req].get("name"):
            raise ConfigError(f"{path}: federatedlearning needs a '{req}' module with name and url")
    unknown = set(mods) - {"basemodel", "aggregation"}
    if unknown:
        raise ConfigError(f"{path}: module types {sorted(unknown)} are not used by federatedlearning")
    return {"modules": mods, "fl_data_setting": sec.get("fl_data_setting") or {}}


def _run_case(base_cls: Any, base_hp: Dict[str, Any], agg_cls: Any, agg_hp: Dict[str, Any], env_extra: Dict[str, Any],
              train_rows: Sequence[Dict[str, Any]], test_rows: Sequence[Dict[str, Any]], metrics: Dict[str, Any],
              progress: bool) -> Dict[str, Any]:
    rounds = int(env_extra.get("round", 1))
    n_clients = int(env_extra.get("client_number", 1))
    if not env_extra.get("if_mode_llm", False):
        raise ConfigError("testenv: this example needs if_mode_llm: true (Ianvs reads JSONL only in that mode)")
    t0 = time.perf_counter()
    estimator = base_cls(**base_hp)
    aggregator = agg_cls(**agg_hp)
    clients = [copy.deepcopy(estimator) for _ in range(n_clients)]
    rng = np.random.default_rng(int(base_hp.get("seed", 0)))
    x = np.asarray([r["question"] for r in train_rows], dtype=object)
    y = np.asarray([r["answer"] for r in train_rows], dtype=object)
    parts = [(x[i].tolist(), y[i].tolist()) for i in np.array_split(rng.permutation(len(x)), n_clients)]
    for r in range(rounds):
        collected = []
        for k, c in enumerate(clients):
            info = c.train(parts[k], None, device_id=0, client_id=k)
            collected.append(_AggClient(int(info["num_samples"]), c.get_weights()))
        new = aggregator.aggregate(collected)
        for c in clients:
            c.set_weights(new)
        if progress:
            print(f"  round {r + 1}/{rounds}: {sum(a.num_samples > 0 for a in collected)} clients trained", flush=True)
    preds = clients[0].predict([str(r["question"]) for r in test_rows])
    y_true = [r["answer"] for r in test_rows]
    values = {name: float(fn(y_true, preds)) for name, fn in metrics.items()}
    return {"metrics": values, "seconds": round(time.perf_counter() - t0, 1), "predictions": preds}


def run_federated_job(config_path: str, *, smoke: bool = False, progress: bool = True) -> dict:
    """Run every algorithm (and hyperparameter combination) of a federatedlearning benchmarkingjob.

    ``smoke``: 2 clients, 2 rounds, the tiny model, 4 train and 2 test documents (seconds).
    Writes ``<workspace>/<name>/rank/all_rank.csv`` and returns ``{"rows": [...], "rank_file": ...}``.
    """
    job = load_yaml(config_path, "benchmarkingjob")
    for key in ("name", "testenv", "test_object"):
        if key not in job:
            raise ConfigError(f"{config_path}: missing benchmarkingjob key '{key}'")
    env = load_testenv(job["testenv"])
    extra = dict(env.extra) if hasattr(env, "extra") else {}
    if smoke:
        extra.update({"round": 2, "client_number": 2})
    ds = env.dataset
    train_rows = _read_jsonl(ds.get("train_data") or ds.get("train_url") or "")
    test_rows = _read_jsonl(ds.get("test_data") or ds.get("test_url") or "")
    if smoke:
        train_rows, test_rows = train_rows[:4], test_rows[:2]
    metrics: Dict[str, Any] = {}
    for m in env.metrics:
        if m.get("url"):
            import_module_file(m["url"])
        metrics[m["name"]] = ClassFactory.get_cls(ClassType.GENERAL, m["name"])
    rows: List[Dict[str, Any]] = []
    algos = (job["test_object"] or {}).get("algorithms") or []
    if not algos:
        raise ConfigError(f"{config_path}: test_object.algorithms is empty")
    for algo in algos:
        spec = _load_fl_algorithm(algo["url"])
        bm, ag = spec["modules"]["basemodel"], spec["modules"]["aggregation"]
        import_module_file(bm["url"])
        import_module_file(ag["url"])
        base_cls = ClassFactory.get_cls(ClassType.GENERAL, bm["name"])
        agg_cls = ClassFactory.get_cls(_FL_AGG, ag["name"])
        for bhp, ahp in itertools.product(_expand(algo["url"], bm), _expand(algo["url"], ag)):
            if smoke:
                bhp = dict(bhp, smoke=True, rounds=2)
            if progress:
                print(f"[{algo['name']}] basemodel {bhp} aggregation {ahp}", flush=True)
            res = _run_case(base_cls, bhp, agg_cls, ahp, extra, train_rows, test_rows, metrics, progress)
            rows.append({"algorithm": algo["name"], "paradigm": "federatedlearning", **res["metrics"],
                         "basemodel": json.dumps(bhp), "aggregation": json.dumps(ahp), "seconds": res["seconds"],
                         "n_test": len(test_rows), "n_train": len(train_rows)})
    sort_keys = [(list(d)[0], list(d.values())[0]) for d in ((job.get("rank") or {}).get("sort_by") or [])]
    for key, order in reversed(sort_keys):
        rows.sort(key=lambda r: (r.get(key) if r.get(key) == r.get(key) else float("-inf")), reverse=order != "ascend")
    out_dir = os.path.join(job.get("workspace", "./workspace"), job["name"] + ("_smoke_ours" if smoke else ""), "rank")
    os.makedirs(out_dir, exist_ok=True)
    rank_file = os.path.join(out_dir, "all_rank.csv")
    with open(rank_file, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    if progress:
        for r in rows:
            print({k: r[k] for k in r if k not in ("basemodel", "aggregation")})
    return {"rows": rows, "rank_file": rank_file}
