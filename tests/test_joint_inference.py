"""Sedna's call semantics, exercised with logic-only fakes (no models)."""
import pytest

from cloud_edge_privacy.errors import ConfigError
from cloud_edge_privacy.bench.joint_inference import JointInference


class FakeEdge:
    def __init__(self, tmp_path, monkeypatch):
        f = tmp_path / "model.gguf"
        f.write_text("x")
        monkeypatch.setenv("model_path", str(f))
        self.loaded_with, self.calls = None, []

    def load(self, model_url=None):
        self.loaded_with = model_url

    def predict(self, data):          # no **kwargs: Sedna filters mining_mode out
        self.calls.append(data)
        return {"answer": "edge", "confidence": data["c"]}


class FakeCloud:
    def __init__(self):
        self.calls = []

    def inference(self, data, **kwargs):
        self.calls.append((data, kwargs))
        return {"answer": "cloud"}


class Hem:
    def __init__(self):
        self.seen = []

    def __call__(self, item):
        self.seen.append(item)
        return item.get("c", item.get("confidence")) < 0.5


def test_inference_then_mining(tmp_path, monkeypatch):
    edge, cloud, hem = FakeEdge(tmp_path, monkeypatch), FakeCloud(), Hem()
    ji = JointInference(edge, cloud, hem)
    assert edge.loaded_with.endswith("model.gguf")
    hard = ji.inference({"c": 0.1}, mining_mode="inference-then-mining")
    easy = ji.inference({"c": 0.9}, mining_mode="inference-then-mining")
    assert hard == [True, {"answer": "cloud"}, {"answer": "edge", "confidence": 0.1}, {"answer": "cloud"}]
    assert easy == [False, {"answer": "edge", "confidence": 0.9}, {"answer": "edge", "confidence": 0.9}, None]
    assert hem.seen[0] == {"answer": "edge", "confidence": 0.1}          # the HEM sees the edge output
    assert cloud.calls[0][1] == {"post_process": None, "mining_mode": "inference-then-mining"}
    assert hard[1] is not hard[3]                                        # element 1 is a deep copy


def test_mining_then_inference(tmp_path, monkeypatch):
    edge, cloud, hem = FakeEdge(tmp_path, monkeypatch), FakeCloud(), Hem()
    ji = JointInference(edge, cloud, hem)
    hard = ji.inference({"c": 0.1}, mining_mode="mining-then-inference")
    easy = ji.inference({"c": 0.9}, mining_mode="mining-then-inference")
    assert hard == [True, {"answer": "cloud"}, None, {"answer": "cloud"}]
    assert easy[0] is False and easy[2] == {"answer": "edge", "confidence": 0.9} and easy[3] is None
    assert hem.seen == [{"c": 0.1}, {"c": 0.9}]                          # the HEM sees the raw sample
    assert edge.calls == [{"c": 0.9}]                                    # edge not run for hard samples
    with pytest.raises(ValueError):
        ji.inference({"c": 0.1}, mining_mode="self-design-typo")


def test_missing_model_path_and_callable_edge_are_rejected(tmp_path, monkeypatch):
    monkeypatch.delenv("model_path", raising=False)
    monkeypatch.delenv("MODEL_PATH", raising=False)

    class E:
        def load(self, **_): ...
        def predict(self, data, **_): ...

    with pytest.raises(ConfigError, match="model_path"):
        JointInference(E(), FakeCloud(), Hem())
    monkeypatch.setenv("model_path", "/no/such/file.gguf")
    with pytest.raises(ConfigError, match="miss"):
        JointInference(E(), FakeCloud(), Hem())

    class Callable(E):
        def __call__(self):
            return 1

    monkeypatch.setenv("model_path", "org/name")   # HF id: load() not called, accepted
    JointInference(E(), FakeCloud(), Hem())
    with pytest.raises(ConfigError, match="__call__"):
        JointInference(Callable(), FakeCloud(), Hem())


def test_router_both_modes_records_decision():
    from cloud_edge_privacy.core.context import CONTEXTS, sample_key
    from cloud_edge_privacy.results import Route, RouteDecision
    from cloud_edge_privacy.routing.routers import EdgeConfidenceRouter

    r = EdgeConfidenceRouter(confidence_threshold=0.8, max_edge_words=5)
    x = {"doc_id": "d", "text": "one two three four five six", "instruction": "i"}
    assert r(x) is True                                           # raw sample, 6 words > 5
    assert CONTEXTS.get().decision(sample_key(x)).route == "cloud"
    edge_result = {"confidence": 0.95, "sample_key": sample_key(x), "profile": {"risk": 0.3}}
    assert r(edge_result) is False
    d = CONTEXTS.get().decision(sample_key(x))
    assert d == RouteDecision(Route.EDGE, "edge_confidence", 0.95, risk=0.3) and d.hard is False
    assert d.to_dict() == {"hard": False, "route": "edge", "signal": "edge_confidence", "value": 0.95, "risk": 0.3}
