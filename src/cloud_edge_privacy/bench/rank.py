"""Write ``all_rank.csv`` and ``selected_rank.csv`` with the columns, format and sorting of Ianvs (commit 1d3da5b)."""
from __future__ import annotations

import csv
import math
import os
from dataclasses import dataclass
from typing import Any, Dict, List

from .ianvs_config import Algorithm


@dataclass
class CaseResult:
    algorithm: Algorithm
    metrics: Dict[str, Any]
    time: str
    url: str


def _is_missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def sort_rows(rows: List[Dict[str, Any]], sort_by: List[Dict[str, str]], metric_names: List[str]) -> List[Dict[str, Any]]:
    """Stable multi-key sort; only metric columns count; only the exact string 'ascend' sorts ascending.

    Missing values (NaN) go last either way, as in pandas.
    """
    keys = [(next(iter(item)), next(iter(item.values())) == "ascend") for item in sort_by or []
            if isinstance(item, dict) and item and next(iter(item)) in metric_names]
    out = list(rows)
    for name, ascend in reversed(keys):
        present = [r for r in out if not _is_missing(r.get(name))]
        missing = [r for r in out if _is_missing(r.get(name))]
        present.sort(key=lambda r: r[name], reverse=not ascend)
        out = present + missing
    return out


def _fmt(v: Any) -> Any:
    return "" if _is_missing(v) else v  # pandas writes NaN and None as an empty cell


def _write(path: str, header: List[str], rows: List[Dict[str, Any]]) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
        w.writerow(["rank", *header])
        for i, row in enumerate(rows, 1):
            w.writerow([i, *(_fmt(row.get(h)) for h in header)])
    os.replace(tmp, path)


def write_rank(output_dir: str, results: List[CaseResult], metric_names: List[str], rank_cfg: Dict[str, Any]) -> Dict[str, str]:
    """Write both rank files (replacing old ones: a rerun does not append). Returns their paths."""
    module_types: List[str] = []
    hp_names: List[str] = []
    for r in results:
        for t in r.algorithm.modules:
            if t not in module_types:
                module_types.append(t)
        for h in r.algorithm.hyperparameter_columns():
            if h not in hp_names:
                hp_names.append(h)
    rows = []
    for r in results:
        row: Dict[str, Any] = {"algorithm": r.algorithm.name, **r.metrics, "paradigm": r.algorithm.paradigm_type}
        row.update({t: m.name for t, m in r.algorithm.modules.items()})
        row.update(r.algorithm.hyperparameter_columns())
        row.update(time=r.time, url=r.url)
        rows.append(row)
    rows = sort_rows(rows, rank_cfg.get("sort_by") or [], metric_names)
    rank_dir = os.path.join(output_dir, "rank")
    os.makedirs(rank_dir, exist_ok=True)
    paths = {"all": os.path.join(rank_dir, "all_rank.csv"), "selected": os.path.join(rank_dir, "selected_rank.csv")}
    all_header = ["algorithm", *metric_names, "paradigm", *module_types, *hp_names, "time", "url"]
    save_mode = rank_cfg.get("save_mode", "selected_and_all")
    if save_mode != "selected_only":
        _write(paths["all"], all_header, rows)
    sel = rank_cfg.get("selected_dataitem") or {}
    pick = lambda key, default: default if sel.get(key, ["all"]) == ["all"] else list(sel[key])  # noqa: E731
    sel_header = ["algorithm", *pick("metrics", metric_names), "paradigm", *pick("modules", module_types),
                  *pick("hyperparameters", hp_names), "time", "url"]
    seen, selected = set(), []
    for row in rows:
        key = tuple(str(row.get(h)) for h in sel_header[:-2])
        if key not in seen:
            seen.add(key)
            selected.append(row)
    paradigms = sel.get("paradigms", ["all"])
    if paradigms != ["all"]:
        selected = [r for r in selected if r["paradigm"] in paradigms]
    _write(paths["selected"], sel_header, selected)
    return paths
