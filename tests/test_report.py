"""The readable leaderboard, per-sample intervals and the paired test, on a hand-built job."""
import csv
import json
import math

import pytest

from cloud_edge_privacy.metrics import stats
from cloud_edge_privacy.reporting.report import epsilon_note, write_report
from cloud_edge_privacy.reporting.report_plots import case_labels

BACKGROUND = {
    "p-anna": " ".join(["anna holm fisherman tromso harbour nets trawler"] * 40),
    "p-bela": " ".join(["bela kovacs violinist szeged conservatory concerto"] * 40),
}
DOCS = {"p-anna": "Anna Holm, a fisherman of Tromso, mends trawler nets.",
        "p-bela": "Bela Kovacs, a violinist of Szeged, played a concerto."}
# gold: the person's name is DIRECT, the town QUASI
GOLD = {}
for doc_id, text in DOCS.items():
    name = text.split(",")[0]
    town = text.split(" of ")[1].split(",")[0]
    GOLD[doc_id] = {"doc_id": doc_id, "text": text, "annotations": {"a1": [
        {"entity_type": "PERSON", "entity_mention_id": "m1", "start_offset": 0, "end_offset": len(name),
         "span_text": name, "identifier_type": "DIRECT", "entity_id": "e1"},
        {"entity_type": "LOC", "entity_mention_id": "m2", "start_offset": text.index(town),
         "end_offset": text.index(town) + len(town), "span_text": town, "identifier_type": "QUASI", "entity_id": "e2"}]}}
RANDOMNESS = "benchmark (seed 42): guarantees do not hold against whoever knows the seed"


def _record(doc_id, sent, answer, status="ok"):
    res = {"sample_id": doc_id, "route": "cloud", "status": status, "answer": answer if status == "ok" else "",
           "sent_messages": None if sent is None else [{"role": "user", "content": sent}], "masks": [],
           "timings_ms": {"cloud_call": 100.0}, "randomness": RANDOMNESS}
    return {"doc_id": doc_id, "is_hard_example": True, "result": res, "edge_result": None, "cloud_result": res}


@pytest.fixture
def job(tmp_path, monkeypatch):
    bg = tmp_path / "bk.json"
    bg.write_text(json.dumps(BACKGROUND))
    monkeypatch.setenv("TAB_BACKGROUND_KNOWLEDGE", str(bg))
    monkeypatch.setenv("CEP_CACHE_DIR", str(tmp_path / "cache"))
    data = tmp_path / "test.jsonl"
    data.write_text("".join(json.dumps({"question": {"doc_id": d, "text": t}, "answer": GOLD[d]}) + "\n"
                            for d, t in DOCS.items()))
    masked = {d: t.replace(t.split(",")[0], "[PERSON]") for d, t in DOCS.items()}
    cases = [  # (method, eps, records), in the all_rank order Ianvs would write
        ("dp_numbers", "0", [_record(d, None, "", "privacy_failure") for d in DOCS]),   # answers nothing
        ("none", "", [_record(d, DOCS[d], "a summary of the case") for d in DOCS]),
        ("prism_ldp", "16", [_record(d, masked[d], "a summary of the case") for d in DOCS]),
    ]
    rows = []
    for i, (method, eps, recs) in enumerate(cases):
        d = tmp_path / f"case{i}"
        d.mkdir()
        (d / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
        rows.append({"rank": i + 1, "algorithm": "privacy-gateway-routing", "sels": "", "paradigm": "jointinference",
                     "cloudmodel": "TabPrivacyCloudModel", "cloudmodel-privacy_method": method,
                     "cloudmodel-epsilon": eps, "cloudmodel-seed": "42", "url": str(d)})
    (tmp_path / "rank").mkdir()
    with open(tmp_path / "rank" / "all_rank.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return tmp_path, data


def test_report_leaderboard_and_csv(job):
    out, data = job
    text = open(write_report(str(out), data_file=str(data), judge=False), encoding="utf-8").read()
    assert RANDOMNESS in text
    board = text.split("## Leaderboard")[1].split("\n## ")[0]
    lines = [l for l in board.splitlines() if l.startswith("| ")][1:]
    # the configuration that answered nothing is moved last and flagged; ε=16 is flagged
    assert lines[0].startswith("| 1 | none |") and lines[1].startswith("| 2 | prism_ldp ε=16 |")
    assert "no meaningful guarantee" in lines[1]
    assert lines[2].startswith("| 3 | dp_numbers ε=0 (**answered nothing**) |") and "| 0 / 2 |" in lines[2]
    # none sends both names and towns: SELS 1 (n=2); prism_ldp hides the names: (3+3)/(5+3+5+3) = 0.375
    assert "1.000 [1.000, 1.000] (n=2)" in lines[0]
    assert "0.375 [0.375, 0.375] (n=2)" in lines[1]
    # TRIR: the attacker links both unprotected texts and both masked ones (the towns remain): 1.0
    assert lines[0].count("1.000 [1.000, 1.000] (n=2)") == 2
    # APR: the failed configuration answered nothing: zero quality on both samples
    assert "0.000 [0.000, 0.000] (n=2)" in lines[2]
    with open(out / "rank" / "leaderboard.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    head = list(rows[0])
    assert head[:10] == ["position", "test_case", "method", "epsilon", "epsilon_note", "route_edge",
                         "route_collaborative", "route_cloud", "n_completed", "n_failed"]
    assert [r["test_case"] for r in rows] == ["none", "prism_ldp ε=16", "dp_numbers ε=0"]
    assert rows[1]["epsilon_note"] == "no meaningful guarantee" and rows[2]["n_completed"] == "0"
    assert float(rows[1]["sels"]) == 0.375 and rows[1]["sels_n"] == "2"
    assert "all_rank:url" in head and rows[0]["randomness"] == RANDOMNESS
    # between test cases: answering (similarity 1 on both samples) vs answering nothing (0): +1, significant
    pairwise = text.split("## Which differences between test cases are significant")[1]
    assert "**apr_similarity**: 1 of 1 pairs significant" in pairwise
    assert "prism_ldp ε=16 − dp_numbers ε=0: +1.000 [+1.000, +1.000] (n=2, significant)" in pairwise
    # the per-metric section compares with the baseline on the same samples
    assert "### sels" in text and "-0.625" in text.split("### sels")[1].split("###")[0]


def test_case_labels_name_what_differs():
    rows = [{"algorithm": "a", "cloudmodel": "M", "cloudmodel-privacy_method": "none", "cloudmodel-seed": "1",
             "cloudmodel-epsilon": "", "edgemodel": "E", "edgemodel-max_tokens": "96"},
            {"algorithm": "a", "cloudmodel": "M", "cloudmodel-privacy_method": "prism_ldp", "cloudmodel-seed": "1",
             "cloudmodel-epsilon": "4", "edgemodel": "E", "edgemodel-max_tokens": "128"},
            {"algorithm": "a", "cloudmodel": "M", "cloudmodel-privacy_method": "prism_ldp", "cloudmodel-seed": "1",
             "cloudmodel-epsilon": "4", "edgemodel": "E", "edgemodel-max_tokens": "128"}]
    assert case_labels(rows) == ["none max_tokens=96", "prism_ldp ε=4 max_tokens=128 #1",
                                 "prism_ldp ε=4 max_tokens=128 #2"]


def test_epsilon_note():
    assert epsilon_note("16") == "no meaningful guarantee" and epsilon_note("10") == "" and epsilon_note("") == ""


def test_bootstrap_by_hand():
    # constant values: the interval collapses on the value
    e = stats.bootstrap_ci([0.5, 0.5, 0.5])
    assert (e.value, e.low, e.high, e.n) == (0.5, 0.5, 0.5, 3)
    # None and NaN are not samples; one sample gives no interval
    one = stats.bootstrap_ci([None, 2.0, math.nan])
    assert one.n == 1 and one.value == 2.0 and math.isnan(one.low) and one.fmt() == "2.000 (n=1)"
    assert stats.bootstrap_ci([]).fmt() == "n/a (n=0)"
    # 0/1 values: the mean is 0.5 and the interval lies within [0, 1] around it
    e = stats.bootstrap_ci([0, 1] * 10)
    assert e.value == 0.5 and 0.2 < e.low < 0.5 < e.high < 0.8
    # ratio of sums, not mean of ratios: (1 + 3) / (2 + 2) = 1.0 while the mean of ratios would be 1.0 too;
    # (1 + 0) / (1 + 3) = 0.25 vs mean of ratios 0.5
    assert stats.bootstrap_ci([(1.0, 1.0), (0.0, 3.0)]).value == 0.25
    assert stats.bootstrap_ci([1.0, 2.0, 3.0], total=True).value == 6.0
    # fixed seed: the same interval every time
    assert stats.bootstrap_ci([0.1, 0.7, 0.3, 0.9]) == stats.bootstrap_ci([0.1, 0.7, 0.3, 0.9])


def test_paired_difference_by_hand():
    a = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
    b = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    d = stats.paired_difference(a, b)
    assert d.diff == 1.0 and d.low == 1.0 and d.high == 1.0 and d.significant
    # a single differing sample out of 10: not significant (its interval reaches 0)
    d2 = stats.paired_difference([1] + [0] * 9, [0] * 10)
    assert d2.diff == pytest.approx(0.1) and d2.low == 0.0 and not d2.significant
    # samples missing on either side are left out of the pairing
    d3 = stats.paired_difference([1, None, 1], [0, 0, None])
    assert d3.n == 1 and not d3.significant and d3.fmt() == "n/a (n=1)"
    with pytest.raises(ValueError):
        stats.paired_difference([1], [1, 2])


def test_a_breakdown_with_nothing_measured_says_so_without_a_legend_warning(tmp_path):
    # every answer replayed from the response cache: no stage has a time, the chart says so (matplotlib used to
    # print "No artists with labels found to put in legend" into the README command's output)
    import warnings

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from cloud_edge_privacy.reporting.report_plots import _stacked_barh

    out = tmp_path / "latency.png"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _stacked_barh(plt, str(out), ["a", "b"], {"detection": [0.0, 0.0], "cloud": [0.0, 0.0]}, "ms", "latency")
    assert out.stat().st_size > 0
