"""Issue 21 item 3: a metric is declared once (metrics/catalog.py); registration, directions and per-sample
aggregation derive from the declaration."""
import math

import pytest
import yaml

from cloud_edge_privacy.metrics.catalog import METRICS, MetricSpec, per_sample_metrics, register_metrics
from conftest import REPO


def _testenv_metric_names():
    names = set()
    for path in REPO.glob("examples/**/test*env*.yaml"):
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        for m in (doc.get("testenv") or {}).get("metrics") or []:
            names.add(m["name"])
    return names


def test_every_metric_a_testenv_selects_is_declared_with_a_direction():
    names = _testenv_metric_names()
    assert {"pdr", "sels", "leak_direct", "llm_judge", "ts_sts_cloud"} <= names
    missing = sorted(n for n in names if n not in METRICS)
    assert not missing, f"declare these in metrics/catalog.py: {missing}"


def test_registration_directions_and_aggregation_derive_from_the_catalog():
    from cloud_edge_privacy.reporting import leaderboard
    from cloud_edge_privacy.metrics import privacy
    from cloud_edge_privacy.registry import ClassFactory, ClassType

    registered = register_metrics()
    assert set(registered) == {n for n, s in METRICS.items() if s.compute is not None and s.family == "tab"}
    assert set(register_metrics("timeseries")) == {n for n in METRICS if n.startswith("ts_")}
    with pytest.raises(ValueError, match="no metric of family"):
        register_metrics("nope")
    assert ClassFactory.get_cls(ClassType.GENERAL, "pdr") is privacy.pdr
    assert leaderboard.header("sels") == "sels ↓" and leaderboard.header("pdr") == "pdr ↑"
    assert leaderboard.header("edge_ratio") == "edge_ratio" and leaderboard.header("mystery") == "mystery ?"
    assert {s.name: s.aggregation for s in per_sample_metrics()}["leak_direct"] == "total"


def test_a_declaration_is_checked():
    with pytest.raises(ValueError, match="direction"):
        MetricSpec("x", "up", "utility", "d")
    with pytest.raises(ValueError, match="go together"):
        MetricSpec("x", "higher", "utility", "d", "metrics.privacy:pdr", per_sample="metrics.per_sample:pdr_values")


def test_per_sample_values_cover_the_declared_metrics_and_agree_with_ianvs():
    from cloud_edge_privacy.metrics.per_sample import per_sample_values
    from cloud_edge_privacy.results import Route, SampleResult

    gold = {"text": "Anna Berg met Bo.", "annotations": {"a1": [
        {"start_offset": 0, "end_offset": 9, "span_text": "Anna Berg", "identifier_type": "DIRECT",
         "entity_type": "PERSON", "entity_mention_id": "m1", "entity_id": "e1"}]}}
    leaked = SampleResult("d1", Route.CLOUD, sent_messages=[{"role": "user", "content": "Anna Berg met Bo."}],
                          masks=[]).to_dict()
    hidden = SampleResult("d2", Route.CLOUD, sent_messages=[{"role": "user", "content": "[PERSON_1] met Bo."}],
                          masks=[[0, 9]]).to_dict()
    y_true, y_pred = [gold, gold], [[True, leaked, None, leaked], [True, hidden, None, hidden]]
    values = per_sample_values(y_true, y_pred, ["d1", "d2"], embeddings=False, trir=False)
    assert set(values) == {s.name for s in per_sample_metrics() if s.needs is None}
    assert values["leak_direct"] == {"d1": 1.0, "d2": 0.0}
    num = sum(n for n, _ in values["pdr"].values())
    den = sum(d for _, d in values["pdr"].values())
    assert math.isclose(num / den, METRICS["pdr"].function()(y_true, y_pred))
