"""Issue 21 item 1: typed values between the rooms, serialised in one place."""
import copy
import json

import pytest

from cloud_edge_privacy.metrics.samples import SampleView, unpack
from cloud_edge_privacy.results import (NO_DECISION, CloudReply, Route, RouteDecision, SampleResult, Stage,
                                        Status, Tokens)


def _cloud_result():
    r = SampleResult("d1", Route.COLLABORATIVE, sample_key="k", router=RouteDecision(Route.COLLABORATIVE, "prism_gate",
                     risk=0.4, probs={"edge": 0.1, "collaborative": 0.8, "cloud": 0.1}), privacy_method="placeholder",
                     sent_messages=[{"role": "user", "content": "[PERSON_1] asks"}], masks=[[0, 4]],
                     detected_entities=[], epsilon_spent={}, tokens=Tokens(cloud_prompt=10, cloud_completion=5))
    r.time(Stage.DETECTION, 3.0)
    r.time(Stage.CLOUD_CALL, 100.0)
    r.extra["wall_ms"] = 120.0  # what a wrapper (PRISM's meter) adds
    return r


def test_enums_are_their_strings_in_json():
    assert Route.CLOUD == "cloud" and Status.PRIVACY_FAILURE == "privacy_failure" and str(Route.EDGE) == "edge"
    d = _cloud_result().to_dict()
    text = json.dumps(d)
    assert '"route": "collaborative"' in text and '"status": "ok"' in text
    assert d["router"] == {"hard": True, "route": "collaborative", "signal": "prism_gate", "risk": 0.4,
                           "probs": {"edge": 0.1, "collaborative": 0.8, "cloud": 0.1}}
    assert d["timings_ms"] == {"detection": 3.0, "cloud_call": 100.0} and d["wall_ms"] == 120.0
    assert "reason" not in d and "cloud_answer" not in d  # unset values are not written


def test_round_trip_through_the_ianvs_boundary():
    r = _cloud_result()
    d = copy.deepcopy(r.to_dict())  # what Sedna keeps
    back = SampleResult.from_dict(json.loads(json.dumps(d)))
    assert back == r and back.to_dict() == d
    assert back.router.hard and back.tokens.cloud == 15 and back.extra == {"wall_ms": 120.0}


def test_view_reads_typed_results_from_dicts():
    failed = SampleResult("d2", Route.CLOUD).fail(Status.PRIVACY_FAILURE, "egress guard blocked the request")
    preds = [[True, _cloud_result().to_dict(), None, _cloud_result().to_dict()],
             [True, failed.to_dict(), None, failed.to_dict()]]
    ok, blocked = unpack([{}, {}], preds)
    assert isinstance(ok.cloud, SampleResult) and ok.route == Route.COLLABORATIVE and ok.completed
    assert ok.field("wall_ms") == 120.0 and ok.field("tokens").cloud == 15 and ok.went_to_cloud
    assert blocked.status == "privacy_failure" and not blocked.completed and not blocked.went_to_cloud
    # a view built from dicts by hand (PRISM's scripts) is typed the same way
    assert SampleView({}, True, preds[0][1], None, preds[0][3]).cloud == ok.cloud


def test_typed_values_have_no_key_access():
    """Rooms read fields, not keys: dict-style access fails loudly instead of hiding a typo."""
    r = _cloud_result()
    assert r.status == "ok" and r.router.route == "collaborative" and r.reason is None
    for value in (r, CloudReply("hi", 3, 2, 10.0, cache_hit=True), r.router):
        with pytest.raises(TypeError):
            value["status"]  # noqa: B018
        assert not hasattr(value, "get")


def test_route_decision_from_dict_and_the_missing_decision():
    assert RouteDecision.from_dict({"route": "edge", "signal": "fixed"}) == RouteDecision(Route.EDGE, "fixed")
    assert NO_DECISION.route == Route.CLOUD and NO_DECISION.hard
