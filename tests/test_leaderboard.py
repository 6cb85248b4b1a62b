"""Directions, the ranking rule, the Pareto view, the console table, the CI comparison and the generic report."""
import csv
import json

from cloud_edge_privacy.reporting import leaderboard as lb
from cloud_edge_privacy.reporting.ci_check import compare
from cloud_edge_privacy.bench.rank import sort_rows

SORT = [{"leak_direct": "ascend"}, {"n_failed": "ascend"}, {"sels": "ascend"}, {"llm_judge": "descend"},
        {"cpp": "ascend"}, {"latency_mean_ms": "ascend"}]


def test_directions_come_from_sort_by_then_the_table():
    assert lb.direction("llm_judge", SORT) == lb.HIGHER and lb.direction("sels", SORT) == lb.LOWER
    assert lb.direction("ts_sts_cloud") == lb.HIGHER and lb.direction("edge_ratio") == lb.INFO
    assert lb.direction("a_metric_nobody_declared") is None
    assert lb.header("a_metric_nobody_declared") == "a_metric_nobody_declared ?"
    assert lb.header("sels", SORT) == "sels ↓" and lb.header("llm_judge", SORT) == "llm_judge ↑"
    assert lb.describe_rule(SORT).startswith("by `leak_direct` (lower first), ties broken by `n_failed`")


def test_utility_breaks_a_leakage_tie_before_latency():
    """The default job's case: suppression and placeholder tie on leakage (and, on three documents, on the
    judge's score); the faster one used to win, now the one that keeps more of the content does."""
    rows = [{"m": "none", "leak_direct": 9, "n_failed": 0, "sels": 0.66, "llm_judge": 8.0, "cpp": 0.02,
             "latency_mean_ms": 30000},
            {"m": "suppression", "leak_direct": 0, "n_failed": 0, "sels": 0.02, "llm_judge": 8.0, "cpp": 0.39,
             "latency_mean_ms": 23600},
            {"m": "placeholder", "leak_direct": 0, "n_failed": 0, "sels": 0.02, "llm_judge": 8.0, "cpp": 0.33,
             "latency_mean_ms": 39000},
            {"m": "judged_better", "leak_direct": 0, "n_failed": 0, "sels": 0.02, "llm_judge": 9.0, "cpp": 0.5,
             "latency_mean_ms": 50000},
            {"m": "fails", "leak_direct": 0, "n_failed": 3, "sels": 0.0, "llm_judge": 0.0, "cpp": 0.0,
             "latency_mean_ms": 1.0}]
    names = ["leak_direct", "n_failed", "sels", "llm_judge", "cpp", "latency_mean_ms"]
    new = [r["m"] for r in sort_rows(rows, SORT, names)]
    old = [r["m"] for r in sort_rows(rows, SORT[:3] + SORT[5:], names)]
    assert new == ["judged_better", "placeholder", "suppression", "fails", "none"]
    assert old == ["suppression", "placeholder", "judged_better", "fails", "none"]


def test_pareto_dominance():
    dom = lb.pareto_dominated({"a": (0.0, 0.9), "b": (0.0, 0.5), "c": (0.2, 0.95), "d": (0.3, 0.9),
                               "e": (float("nan"), 1.0)})
    assert dom == {"a": [], "b": ["a"], "c": [], "d": ["a", "c"]}      # ties on both axes dominate nobody


def test_console_table_is_short_and_names_rows_by_what_differs():
    cases = [{"label": "placeholder", "row": {"leak_direct": "0", "sels": "0.0", "llm_judge": "6.5", "cpp": "0.2",
                                              "latency_mean_ms": "1234.5678"},
              "preds": [{"status": "ok", "replayed": True}, {"status": "privacy_failure"}]}]
    text = lb.console_table(cases, SORT, ["leak_direct", "sels", "llm_judge", "cpp", "latency_mean_ms"])
    head, rule, row = text.splitlines()
    assert head.split()[:6] == ["#", "test", "case", "done/failed", "replayed", "leak_direct"]
    assert "llm_judge ↑" in head and "latency_mean_ms ↓" in head and "cpp ↓" in head
    assert row.split()[:4] == ["1", "placeholder", "1/1", "1"] and "1234.568" in row


def test_ci_compare_rules():
    expected = {"rules": {"llm_judge": {"check": "abs", "tol": 1.0}, "cloud_tokens": {"check": "rel", "tol": 0.1},
                          "latency_mean_ms": {"check": "skip", "why": "wall clock"}},
                "cases": {"none": {"sels": 1.0, "llm_judge": 6.0, "cloud_tokens": 100, "latency_mean_ms": 5},
                          "gone": {"sels": 0.0}}}
    got = {"none": {"sels": 1.0, "llm_judge": 6.9, "cloud_tokens": 111, "latency_mean_ms": 99999},
           "new": {"sels": 0.0}}
    bad = compare(expected, got)
    assert ("none", "cloud_tokens", "100", "111", "|diff| <= 0.1 x expected") in bad
    assert ("gone", "*", "present", "(missing)", "test cases must match") in bad
    assert ("new", "*", "(no such test case)", "present", "test cases must match") in bad
    assert len(bad) == 3                                                   # llm_judge within 1.0, latency skipped
    got["none"]["sels"] = None
    assert ("none", "sels", "1", "(empty)", "exact") in compare(expected, got)


def _timeseries_job(tmp_path):
    """A finished time-series-like job: its own metrics, no TAB gold, no predictions with TAB fields."""
    rows = []
    for i, (name, attack, sts) in enumerate([("ts-none", 1.0, 1.0), ("ts-uniform", 0.2, 0.6), ("ts-bad", 0.5, 0.5)]):
        d = tmp_path / f"case{i}"
        d.mkdir()
        res = {"status": "ok", "route": "cloud", "timings_ms": {"ts_release": 5.0, "cloud_call": 100.0}}
        (d / "predictions.jsonl").write_text(json.dumps({"doc_id": f"s{i}", "is_hard_example": True, "status": "ok",
                                                         "result": res, "edge_result": None, "cloud_result": res}) + "\n")
        rows.append({"rank": i + 1, "algorithm": name, "ts_attack_event_success": attack, "ts_sts_cloud": sts,
                     "ts_mystery": 3, "paradigm": "jointinference", "cloudmodel": "TsCloud", "url": str(d)})
    (tmp_path / "rank").mkdir()
    with open(tmp_path / "rank" / "all_rank.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    job = tmp_path / "job.yaml"
    job.write_text("benchmarkingjob:\n  rank:\n    sort_by:\n      - ts_attack_event_success: \"ascend\"\n"
                   "      - ts_sts_cloud: \"descend\"\n")
    return job


def test_report_shows_each_examples_own_metrics_and_no_tab_hints(tmp_path, monkeypatch):
    from cloud_edge_privacy.reporting.report import console_board, write_report

    monkeypatch.setenv("CEP_CACHE_DIR", str(tmp_path / "cache"))
    job = _timeseries_job(tmp_path)
    text = open(write_report(str(tmp_path), str(job), judge=False, embeddings=False), encoding="utf-8").read()
    board = text.split("## Leaderboard")[1].split("\n## ")[0]
    assert "ts_attack_event_success ↓" in board and "ts_sts_cloud ↑" in board
    assert "sels" not in board and "TRIR" not in board and "no gold data" not in text     # no TAB columns or hints
    assert "| ts_mystery | not declared |" in text                                          # shown, direction unknown
    assert "dominated by ts-uniform" in board                                               # ts-bad: 0.5/0.5
    plots = text.split("## Plots")[1] if "## Plots" in text else ""
    assert "latency_breakdown" in plots
    html = (tmp_path / "leaderboard.html").read_text(encoding="utf-8")
    assert "ts_sts_cloud ↑" in html and html.count("<tr><td class=\"num\" data-v=") == 3
    console = console_board(str(tmp_path), str(job))
    assert "ts_attack_event_success ↓" in console and "(dominated)" in console
