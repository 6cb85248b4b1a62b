"""What a test case leaves for the report: under Ianvs the example's metrics record it (Ianvs writes no per-sample
output and tells no module the test case's folder), under our runner the runner does; and the machine's load
beside the wall-clock metrics says when timings are not comparable."""
import json
import math
import sys
import types

from cloud_edge_privacy.bench.case_record import recording, record_under_ianvs
from cloud_edge_privacy.reporting import machine

Y_PRED = [[True, {"status": "ok", "route": "cloud", "cloud_cache_hit": True}, None, {"status": "ok"}],
          [False, {"status": "ok"}, {"status": "ok"}, None],
          [True, {"status": "privacy_failure"}, None, {"status": "privacy_failure"}]]
Y_TRUE = [{"doc_id": "d1", "text": "a"}, {"doc_id": "d2", "text": "b"}, json.dumps({"doc_id": "d3", "text": "c"})]


def _ianvs_test_case_class():
    """A class with the name and module of Ianvs 1d3da5b's TestCase whose compute_metrics calls the metrics as
    Ianvs does (a stand-in for the logic under test: finding the test case's folder on the call stack)."""
    mod = types.ModuleType("core.testcasecontroller.testcase.testcase")

    class TestCase:  # pylint: disable=too-few-public-methods
        def __init__(self, output_dir):
            self.output_dir = output_dir
            module = types.SimpleNamespace(name="TabPrivacyCloudModel", hyperparameters={"privacy_method": "none"})
            self.algorithm = types.SimpleNamespace(name="algo", modules={"cloudmodel": module})

        def compute_metrics(self, metric_funcs, y_true, y_pred):
            return {name: f(y_true, y_pred) for name, f in metric_funcs.items()}

    TestCase.__module__ = mod.__name__
    return TestCase


def test_metrics_called_by_an_ianvs_test_case_record_it_in_its_folder(tmp_path):
    case_dir = tmp_path / "ws" / "job" / "algo" / "0b7e"
    count = recording("n_samples", lambda y_true, y_pred: len(y_pred))
    ratio = recording("edge_ratio", lambda y_true, y_pred: sum(not p[0] for p in y_pred) / len(y_pred))
    metrics = _ianvs_test_case_class()(str(case_dir)).compute_metrics(
        {"n_samples": count, "edge_ratio": ratio}, Y_TRUE, Y_PRED)
    assert metrics == {"n_samples": 3, "edge_ratio": 1 / 3}
    preds = [json.loads(line) for line in (case_dir / "predictions.jsonl").read_text().splitlines()]
    assert [p["doc_id"] for p in preds] == ["d1", "d2", "d3"]
    assert [p["is_hard_example"] for p in preds] == [True, False, True]
    assert [p["status"] for p in preds] == ["ok", "ok", "privacy_failure"]
    assert [p["replayed"] for p in preds] == [True, False, False]
    case = json.loads((case_dir / "test_case.json").read_text())
    assert case["metrics"] == {"n_samples": 3, "edge_ratio": 1 / 3}
    assert case["hyperparameters"] == {"cloudmodel-privacy_method": "none"}
    assert case["modules"] == {"cloudmodel": "TabPrivacyCloudModel"} and case["runner"] == "ianvs"
    assert case["samples"] == {"edge": 1, "cloud": 2, "failed": 1, "replayed": 1}
    assert len(case["machine"]["loadavg_1_5_15"]) == 3 and case["machine"]["cpu_count"] >= 1


def test_without_an_ianvs_test_case_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    metric = recording("n", lambda y_true, y_pred: len(y_pred))
    assert metric(Y_TRUE, Y_PRED) == 3 and metric.__name__ == "<lambda>"
    assert record_under_ianvs("n", 3, Y_TRUE, Y_PRED) is None
    assert list(tmp_path.iterdir()) == []


def test_our_runner_writes_the_same_record(tmp_path):
    from cloud_edge_privacy.bench.case_record import case_record, write_case, write_predictions

    write_predictions(str(tmp_path), ["d1", "d2", "d3"], Y_PRED)
    write_case(str(tmp_path), case_record("algo", {}, {}, {"n": 3}, Y_PRED, "cloud-edge-privacy"))
    lines = (tmp_path / "predictions.jsonl").read_text().splitlines()
    assert [json.loads(x)["replayed"] for x in lines] == [True, False, False]
    assert json.loads((tmp_path / "test_case.json").read_text())["machine"]["cpu_count"] >= 1


def _machine(load5, cores=2, affinity=None):
    return {"loadavg_1_5_15": [load5, load5, load5], "cpu_count": cores,
            "cpu_affinity": affinity or list(range(cores)), "pinned": bool(affinity) and len(affinity) < cores}


def test_timings_are_comparable_only_on_a_calm_even_machine():
    assert machine.comparability({"a": _machine(0.5), "b": _machine(0.9)}) == []
    busy = machine.comparability({"a": _machine(0.5), "b": _machine(3.0)})
    assert any("overloaded" in i and "b (1.50)" in i for i in busy) and any("differed by" in i for i in busy)
    assert any("different numbers of cores" in i
               for i in machine.comparability({"a": _machine(0.2, 4, [0, 1]), "b": _machine(0.2, 4)}))
    assert any("no machine state" in i for i in machine.comparability({"a": None, "b": _machine(0.1)}))
    assert math.isnan(machine.load_per_core(None)) and machine.load_per_core(_machine(1.0, 4, [0, 1])) == 0.5
    assert machine.machine_cell(_machine(1.0, 4, [0, 1])) == "load 1.00 / 2 cores, pinned to 0,1"


def test_report_section_names_the_wall_clock_columns_and_the_verdict():
    cases = [{"label": "none", "meta": {"machine": _machine(0.4)}},
             {"label": "placeholder", "meta": {"machine": _machine(4.0)}}]
    text = "\n".join(machine.section(cases, ["pdr", "latency_mean_ms", "lo_pct"]))
    assert "`latency_mean_ms`, `lo_pct`" in text and "**These wall-clock figures are not comparable:**" in text
    assert machine.section(cases, ["pdr"]) == []
    calm = [{"label": "x", "meta": {"machine": _machine(0.4)}}, {"label": "y", "meta": {"machine": _machine(0.5)}}]
    assert "timings are comparable within this run" in "\n".join(machine.section(calm, ["latency_mean_ms"]))


def test_the_example_metric_file_registers_recording_metrics(tmp_path, monkeypatch):
    """tab_metrics.py registers every catalog metric wrapped for recording, and points TRIR at the example's
    background knowledge only when the environment names none."""
    from conftest import EXAMPLE
    from cloud_edge_privacy.bench.module_loader import import_module_file
    from cloud_edge_privacy.registry import ClassFactory, ClassType

    monkeypatch.setenv("TAB_BACKGROUND_KNOWLEDGE", str(tmp_path / "mine.json"))
    monkeypatch.delitem(sys.modules, "tab_metrics", raising=False)
    import_module_file(str(EXAMPLE / "testenv" / "tab_metrics.py"))
    import os

    assert os.environ["TAB_BACKGROUND_KNOWLEDGE"] == str(tmp_path / "mine.json")
    fn = ClassFactory.get_cls(ClassType.GENERAL, "edge_ratio")
    assert fn.__name__ == "edge_ratio" and fn.__code__.co_name == "metric"
