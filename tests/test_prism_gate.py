import json

import numpy as np

from cloud_edge_privacy.core.context import CONTEXTS, sample_key
from cloud_edge_privacy.routing.prism_gate import ROUTES, SoftGate, cross_validate, gate_features
from cloud_edge_privacy.spans import Span


def _toy(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = np.c_[np.ones(n), rng.normal(size=(n, 2))]
    y = [ROUTES[0] if a > 0.5 else ROUTES[2] if a < -0.5 else ROUTES[1] for a in X[:, 1]]
    return X, y


def test_gate_learns_a_separable_problem_deterministically():
    X, y = _toy()
    g1, g2 = SoftGate.fit(X, y, seed=3), SoftGate.fit(X, y, seed=3)
    assert np.array_equal(g1.weights, g2.weights)
    acc = np.mean([g1.route(x)[0] == t for x, t in zip(X, y)])
    assert acc > 0.9
    assert np.allclose(g1.probs(X).sum(axis=1), 1.0)


def test_entropy_term_has_the_papers_sign():
    """+λH(π) (eq. 5) makes routing more confident: mean entropy falls as λ grows."""
    X, y = _toy()
    def mean_entropy(lam):
        P = SoftGate.fit(X, y, lam=lam, seed=0, epochs=500).probs(X)
        return float(-(P * np.log(P)).sum(axis=1).mean())
    assert mean_entropy(1.0) < mean_entropy(0.0)


def test_cross_validation_is_stratified_and_repeatable():
    X, y = _toy()
    a, b = cross_validate(X, y, folds=5, seed=1), cross_validate(X, y, folds=5, seed=1)
    assert a == b and len(a) == 5 and all(0 <= v <= 1 for v in a)


def test_features_use_only_the_text_and_detected_spans():
    f = gate_features("My name is Anna Berg and my card is 4111 1111 1111 1111.",
                      [Span(11, 20, "PERSON"), Span(36, 55, "CODE")])
    assert f.shape == (16,) and f[0] == 1.0 and f[2] == 1.0   # bias, personal context ("my")


def test_shipped_gate_and_router_in_both_mining_modes():
    from cloud_edge_privacy.routing.routers import PrismGateRouter

    r = PrismGateRouter()
    bank = {"doc_id": "b", "text": "My name is Robert Lee and my card 4326773602606478 was charged 1218 USD.",
            "instruction": "Answer."}
    common = {"doc_id": "c", "text": "What is the boiling point of water at sea level?", "instruction": "Answer."}
    assert r(common) is True                       # raw sample (mining-then-inference)
    assert CONTEXTS.get().decision(sample_key(common)).route == "cloud"
    assert r(bank) is False                        # names + card number: the gate keeps it on the edge
    medical = {"doc_id": "m", "text": "A 42-year-old female patient named John reports pain and nausea. "
               "What is the likely diagnosis?", "instruction": "Answer."}
    assert r(medical) is True
    assert CONTEXTS.get().decision(sample_key(medical)).route == "collaborative"
    strict = PrismGateRouter(edge_risk_threshold=1.0)
    assert strict(medical) is False                # privacy-first rule: risk >= 1.0 never leaves the edge
    d = CONTEXTS.get().decision(sample_key(medical))
    assert d.route == "edge" and "privacy-first" in d.rule
    # inference-then-mining: the edge result carries the profile and the input text
    spans = CONTEXTS.get().detector("default").analyze(common["text"])
    edge_result = {"sample_key": sample_key(common), "input_text": common["text"],
                   "profile": {"entities": [s.to_dict() for s in spans]}, "confidence": 0.9}
    assert r(edge_result) is True


def test_route_cli(tmp_path, capsys):
    from cloud_edge_privacy.cli import main

    src = tmp_path / "p.jsonl"
    src.write_text('{"id": "a", "prompt": "What is the capital of France?"}\n'
                   '{"id": "b", "prompt": "I am Karen Anderson, card 4998543534624759, please help."}\n')
    out = tmp_path / "r.jsonl"
    assert main(["route", "--input", str(src), "--out", str(out)]) == 0
    rows = [json.loads(l) for l in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["a", "b"]
    assert all(set(r) >= {"route", "risk", "entities", "latency_ms"} for r in rows)
    assert rows[1]["risk"] > rows[0]["risk"]
    assert "Karen Anderson" in [e["text"] for e in rows[1]["entities"]]
    assert "median" in capsys.readouterr().out
    (tmp_path / "bad.jsonl").write_text('{"id": 1}\n')
    assert main(["route", "--input", str(tmp_path / "bad.jsonl"), "--out", str(out)]) == 2


def test_router_hands_its_profile_to_the_gateway_explicitly():
    """The gateway protects with the spans the router's profile holds (no second detection, whatever the
    detector cache does); a profile of another text or another detector is not used."""
    from cloud_edge_privacy.core.gateway import PrivacyGateway
    from cloud_edge_privacy.core.profiling import private_fields
    from cloud_edge_privacy.randomness import Randomness
    from cloud_edge_privacy.routing.routers import PrismGateRouter

    class Counting:
        """The real default detector, with its cache off and its calls counted."""

        def __init__(self, det):
            self.det, self.name, self.calls = det, det.name, 0

        def analyze_timed(self, text):
            self.calls += 1
            return self.det.analyze_timed(text)

        def analyze(self, text):
            return self.analyze_timed(text)[0]

    ctx = CONTEXTS.get()
    counting = Counting(ctx.detector("default"))
    counting.det.cache_size = 0
    x = {"doc_id": "p", "text": "A 42-year-old patient named John Smith reports pain. What is the likely diagnosis?",
         "instruction": "Answer."}
    try:
        ctx._detectors["default"] = counting
        decision = PrismGateRouter().decide(x)
    finally:
        ctx._detectors["default"] = counting.det
        counting.det.cache_size = 64
    assert decision.profile is not None and counting.calls == 1
    assert "profile" not in decision.to_dict()          # the raw text never leaves memory
    gw = PrivacyGateway("placeholder", detector=counting, randomness=Randomness.benchmark(0))
    prot = gw.protect_fields(private_fields(x), scope="p", profile=decision.profile)
    assert counting.calls == 1                          # the router's spans were used
    assert "John Smith" not in prot.fields[1] and prot.spans == decision.profile.spans
    other = dict(x, text=x["text"] + " Thanks.")
    gw.protect_fields(private_fields(other), scope="p", profile=decision.profile)
    assert counting.calls == 2                          # another text: the gateway detects itself
