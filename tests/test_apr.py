"""APR against the unprotected baseline, on hand-built cases with known answers (fake embeddings and judge)."""
import csv
import json
import math

import numpy as np
import pytest

from cloud_edge_privacy.metrics.apr import apr_rows
from cloud_edge_privacy.reporting.report_plots import make_plots

VEC = {"x": [1.0, 0.0], "y": [0.0, 1.0], "z": [0.6, 0.8]}
SCORE = {"x": 8.0, "y": 6.0, "z": 3.0, "?": math.nan}


def _pred(doc, hard, answer, request="summarize doc"):
    res = {"answer": answer, "sent_messages": [{"role": "user", "content": request + " " + doc}]}
    return {"doc_id": doc, "is_hard_example": hard, "result": res}


def _case(label, method, preds, eps=""):
    return {"label": label, "row": {"cloudmodel-privacy_method": method, "cloudmodel-epsilon": eps}, "preds": preds}


def embed(texts):
    return np.array([VEC[t] for t in texts])


def judge(request, answer):
    assert request.startswith("summarize doc")  # the baseline's unprotected request
    return SCORE[answer]


def test_apr_similarity_and_judge_ratio_by_hand():
    base = _case("none", "none", [_pred("A", True, "x"), _pred("B", True, "y"), _pred("C", False, "y")])
    case = _case("placeholder", "placeholder", [_pred("A", True, "x"), _pred("B", True, "z"), _pred("C", False, "x")])
    (row,) = apr_rows([base, case], judge=judge, embed=embed)
    # A: x.x = 1, B: y.z = 0.8; C stayed on the edge and is not compared
    assert row["n"] == 2
    assert row["apr_similarity"] == pytest.approx(0.9)
    assert row["apr_similarity_sd"] == pytest.approx(math.sqrt(0.02))
    # judge: with = (8 + 3) / 2, without = (8 + 6) / 2
    assert row["judge_with"] == pytest.approx(5.5) and row["judge_without"] == pytest.approx(7.0)
    assert row["apr_judge"] == pytest.approx(5.5 / 7.0)


def test_apr_skips_unscored_answers_and_samples_only_one_side_sent():
    base = _case("none", "none", [_pred("A", True, "x"), _pred("B", True, "y")])
    case = _case("dp ε=1", "prism_ldp", [_pred("A", True, "?"), _pred("B", False, "y")], eps="1")
    (row,) = apr_rows([base, case], judge=judge, embed=lambda t: np.array([[1.0, 0.0] for _ in t]))
    assert row["n"] == 1 and row["judge_n"] == 0 and math.isnan(row["apr_judge"])


def test_apr_without_baseline_is_empty():
    case = _case("placeholder", "placeholder", [_pred("A", True, "x")])
    assert apr_rows([case], judge=judge, embed=embed) == []


def test_plots_from_a_hand_built_job(tmp_path):
    rows = []
    for i, (method, eps, sels, cpp) in enumerate([("none", "", 0.4, 0.0), ("prism_ldp", "1", 0.05, 0.3),
                                                  ("prism_ldp", "8", 0.07, 0.2)]):
        d = tmp_path / f"case{i}"
        d.mkdir()
        pred = {"doc_id": "A", "is_hard_example": True, "result": {"answer": "x"},
                "cloud_result": {"route": "cloud", "timings_ms": {"detection": 5.0, "cloud_call": 100.0}}}
        (d / "predictions.jsonl").write_text(json.dumps(pred) + "\n")
        rows.append({"rank": i + 1, "algorithm": "a", "cloudmodel-privacy_method": method, "cloudmodel-epsilon": eps,
                     "sels": sels, "cpp": cpp, "url": str(d)})
    (tmp_path / "rank").mkdir()
    with open(tmp_path / "rank" / "all_rank.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    apr = [{"label": "prism_ldp ε=1", "apr_similarity": 0.5}, {"label": "prism_ldp ε=8", "apr_similarity": 0.8}]
    made = make_plots(str(tmp_path), apr)
    assert made == ["latency_breakdown.png", "routes.png", "privacy_utility.png"]
    for name in made:
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_failed_samples_count_as_zero_quality():
    base = _case("none", "none", [_pred("A", True, "x"), _pred("B", True, "y")])
    failed = [_pred("A", True, ""), _pred("B", True, "")]
    for p in failed:
        p["result"]["status"] = "privacy_failure"
    nothing = _case("dp ε=0", "dp_numbers", failed, eps="0")
    half = _case("placeholder", "placeholder", [_pred("A", True, "x"), dict(failed[1])])
    rows = {r["label"]: r for r in apr_rows([base, nothing, half], judge=judge, embed=embed)}
    # answers nothing: similarity 0 on both samples, judge 0 / baseline (8 + 6) / 2
    assert rows["dp ε=0"]["n"] == 2 and rows["dp ε=0"]["n_failed"] == 2
    assert rows["dp ε=0"]["apr_similarity"] == 0.0 and rows["dp ε=0"]["apr_judge"] == 0.0
    # one answered identically (similarity 1, judge 8), one failed (0, 0): 0.5 and 8 / 14
    assert rows["placeholder"]["apr_similarity"] == pytest.approx(0.5)
    assert rows["placeholder"]["apr_judge"] == pytest.approx(8 / 14)
    assert rows["placeholder"]["similarities"] == [1.0, 0.0]
