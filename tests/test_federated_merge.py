"""Merging result sets: a re-run's cells replace the same cells of an earlier run; the rest are kept."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from cloud_edge_privacy.federated.experiment import merge_results

RESULTS = Path(__file__).resolve().parents[1] / "examples" / "TAB" / "federated_privacy_detector_bench" / "results"


def test_merge_later_run_replaces_same_cells(tmp_path):
    blob = json.loads((RESULTS / "grid_rows.json").read_text(encoding="utf-8"))
    old = tmp_path / "old"
    old.mkdir()
    shutil.copy(RESULTS / "grid_rows.json", old / "grid_rows.json")
    rerun = [dict(r) for r in blob["rows"] if r["model"] == "minilm" and r["method"] == "dp_fedavg"][:2]
    assert len(rerun) == 2
    for r in rerun:
        r["PSR"] = 0.123456
    new = tmp_path / "new"
    new.mkdir()
    (new / "grid_rows.json").write_text(json.dumps({"meta": dict(blob["meta"], parts=None), "rows": rerun}),
                                        encoding="utf-8")
    rows = merge_results([str(old), str(new)], str(tmp_path / "out"))
    assert len(rows) == len(blob["rows"])
    assert sum(r["PSR"] == 0.123456 for r in rows) == 2
    meta = json.loads((tmp_path / "out" / "grid_rows.json").read_text(encoding="utf-8"))["meta"]
    assert [p["replaced_earlier_rows"] for p in meta["parts"]] == [0, 2]
    assert meta["parts"][0]["parts"]  # the earlier set's own parts are kept
    assert (tmp_path / "out" / "grid.md").is_file()
