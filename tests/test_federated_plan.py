"""Which cells the default experiment and ``--full-grid`` run (no training): the default keeps every acceptance
row of issue 24 for both model families, the goal rows at every seed; the full grid holds every committed cell."""
from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

from cloud_edge_privacy.federated.experiment import (GOAL_METHODS, ExperimentSpec, cell_cost, plan_cells,
                                                     progress_line)

RESULTS = Path(__file__).resolve().parents[1] / "examples" / "TAB" / "federated_privacy_detector_bench" / "results"
ACCEPTANCE = ("centralized", "fedavg", "dp_fedavg", "dp_ftrl", "fedadam_ldp_paper", "fedadam_ldp_accounted",
              "privateai")


def _rows(tasks):
    """(model, method label, ε, α) -> number of seeds."""
    return Counter((k, m if mu is None else f"{m}_mu{mu:g}", e, a) for k, m, e, _, a, mu in tasks)


def test_default_runs_every_acceptance_row_for_both_models_goal_rows_at_three_seeds():
    tasks = plan_cells(ExperimentSpec(), 1.0)
    rows = _rows(tasks)
    for kind in ("minilm", "hashed_cnn"):
        for m in ACCEPTANCE:
            assert any(k == kind and meth == m and a == 1.0 for k, meth, _, a in rows), (kind, m)
        for m, e in (("fedavg", math.inf), ("dp_fedavg", 1.0), ("dp_fedavg", 10.0), ("dp_ftrl", 1.0), ("dp_ftrl", 10.0)):
            assert rows[(kind, m, e, 1.0)] == 3, (kind, m, e)
        assert rows[(kind, "privateai", 10.0, 1.0)] == 1 and rows[(kind, "centralized", math.inf, 1.0)] == 1
        assert rows[(kind, "fedadam_ldp_paper", 1.0, 1.0)] == 1
    # the α sweep: DP-FedAvg ε = 10 and FedAvg, MiniLM, one seed, α 0.1 and 10
    sweep = {r: n for r, n in rows.items() if r[3] != 1.0}
    assert sweep == {("minilm", m, e, a): 1 for m, e in (("fedavg", math.inf), ("dp_fedavg", 10.0)) for a in (0.1, 10.0)}
    assert len(tasks) == 54 and len(set(tasks)) == len(tasks)
    # seeds: goal rows 0, 1, 2; the rest seed 0
    assert {t[3] for t in tasks if t[1] in GOAL_METHODS and t[4] == 1.0} == {0, 1, 2}
    assert {t[3] for t in tasks if t[1] not in GOAL_METHODS or t[4] != 1.0} == {0}
    assert ExperimentSpec().n_shadows == 16
    # longest first: every DP-SGD cell before any other
    costs = [cell_cost(t[1]) for t in tasks]
    assert costs == sorted(costs, reverse=True) and tasks[0][1] == "dp_fedavg"


def test_full_grid_holds_every_committed_cell_at_its_seed_count():
    full = _rows(plan_cells(ExperimentSpec.full_grid(), 1.0))
    blob = json.loads((RESULTS / "grid_rows.json").read_text(encoding="utf-8"))
    committed = Counter((r["model"], r["method"], float(r["epsilon"]), float(r["alpha"])) for r in blob["rows"])
    missing = {r: n for r, n in committed.items() if full.get(r) != n}
    assert not missing, missing
    assert sum(full.values()) == 108 + 84 + 9  # main grid 18 cells x 2 families x 3 seeds, sweep, μ ablation
    assert ExperimentSpec.full_grid().n_shadows == 32


def test_seed_overrides_and_progress_line():
    spec = ExperimentSpec(seeds=(4, 5), other_seeds=2, sweep_alphas=())
    tasks = plan_cells(spec, 1.0)
    assert {t[3] for t in tasks} == {4, 5} and all(t[4] == 1.0 for t in tasks)
    assert ExperimentSpec(seeded_methods=None, seeds=(7, 8)).seeds_for("centralized") == (7, 8)
    line = progress_line(3, 10, 120.0, 6.0, 18.0)
    assert line == "cells 3/10, 2.0 min elapsed, ~4.0 min left"
    assert "nan" in progress_line(0, 10, 0.0, 0.0, 18.0)


def test_auc_interval_narrows_with_more_windows_and_is_shown_for_one_seed_rows():
    from cloud_edge_privacy.federated.experiment import summarize
    from cloud_edge_privacy.federated.mia import auc_interval

    lo, hi = auc_interval(0.5, 131, 131)
    assert 0.42 < lo < 0.45 and 0.55 < hi < 0.58
    lo2, hi2 = auc_interval(0.5, 1000, 1000)
    assert hi2 - lo2 < hi - lo
    assert auc_interval(1.0, 10, 10) == (1.0, 1.0)
    row = {"model": "minilm", "method": "privateai", "epsilon": 10.0, "seed": 0, "alpha": 1.0, "train_seconds": 1.0,
           "PSR": 1.0, "token_precision": 0.111, "mia_auc": 0.55, "mia_tpr_at_1fpr": 0.02, "privacy": {},
           "lira_online_auc": 0.566, "lira_online_auc_ci95": [0.497, 0.635], "lira_online_tpr_at_1fpr": 0.05}
    assert summarize([row])[0]["lira_auc"] == "0.566 [0.497, 0.635]"
    two = [row, dict(row, seed=1, lira_online_auc=0.570)]
    assert summarize(two)[0]["lira_auc"] == "0.568 ± 0.003"
