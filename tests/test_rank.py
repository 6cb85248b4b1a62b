import csv
import math

from cloud_edge_privacy.bench.ianvs_config import Algorithm, ModuleSpec
from cloud_edge_privacy.bench.rank import CaseResult, sort_rows, write_rank


def _algo(method):
    mods = {"edgemodel": ModuleSpec("edgemodel", "E", "e.py", {"seed": 1}),
            "cloudmodel": ModuleSpec("cloudmodel", "C", "c.py", {"privacy_method": method}),
            "hard_example_mining": ModuleSpec("hard_example_mining", "H", None, {})}
    return Algorithm("alg", "jointinference", mods)


def _read(path):
    with open(path, newline="") as fh:
        return list(csv.reader(fh))


RANK = {"sort_by": [{"leak": "ascend"}, {"pdr": "descend"}],
        "selected_dataitem": {"paradigms": ["all"], "modules": ["all"], "hyperparameters": ["all"],
                              "metrics": ["pdr"]}}


def test_rank_files_columns_and_sorting(tmp_path):
    results = [CaseResult(_algo("none"), {"pdr": 0.2, "leak": 7}, "2026-01-01 00:00:00", "u1"),
               CaseResult(_algo("placeholder"), {"pdr": 0.9, "leak": 0}, "2026-01-01 00:00:01", "u2"),
               CaseResult(_algo("suppression"), {"pdr": 0.95, "leak": 0}, "2026-01-01 00:00:02", "u3")]
    paths = write_rank(str(tmp_path), results, ["pdr", "leak"], RANK)
    rows = _read(paths["all"])
    assert rows[0] == ["rank", "algorithm", "pdr", "leak", "paradigm", "edgemodel", "cloudmodel",
                       "hard_example_mining", "edgemodel-seed", "cloudmodel-privacy_method", "time", "url"]
    assert [r[9] for r in rows[1:]] == ["suppression", "placeholder", "none"]   # leak asc, then pdr desc
    assert [r[0] for r in rows[1:]] == ["1", "2", "3"]
    assert rows[1][10] == "2026-01-01 00:00:02"   # values keep their spaces
    sel = _read(paths["selected"])
    assert sel[0] == ["rank", "algorithm", "pdr", "paradigm", "edgemodel", "cloudmodel", "hard_example_mining",
                      "edgemodel-seed", "cloudmodel-privacy_method", "time", "url"]


def test_rerun_replaces_instead_of_appending(tmp_path):
    r = [CaseResult(_algo("none"), {"pdr": 0.2, "leak": 1}, "t", "u")]
    write_rank(str(tmp_path), r, ["pdr", "leak"], RANK)
    paths = write_rank(str(tmp_path), r, ["pdr", "leak"], RANK)
    assert len(_read(paths["all"])) == 2


def test_nan_sorts_last_and_unknown_sort_keys_are_skipped():
    rows = [{"m": math.nan}, {"m": 1.0}, {"m": 3.0}]
    assert [r["m"] for r in sort_rows(rows, [{"m": "ascend"}], ["m"])][:2] == [1.0, 3.0]
    assert [r["m"] for r in sort_rows(rows, [{"m": "descending"}], ["m"])][:2] == [3.0, 1.0]  # not "ascend"
    assert sort_rows(rows, [{"other": "ascend"}], ["m"]) == rows


def test_nan_metric_is_an_empty_cell_like_pandas(tmp_path):
    paths = write_rank(str(tmp_path), [CaseResult(_algo("none"), {"pdr": math.nan, "leak": 0}, "t", "u")],
                       ["pdr", "leak"], RANK)
    assert _read(paths["all"])[1][2:4] == ["", "0"]
