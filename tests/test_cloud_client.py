"""The HTTP-only cloud client and the edge pipeline against a logging fake OpenAI server on 127.0.0.1.

The fake is a test double for the remote endpoint (the real-model path is covered in test_end_to_end).
"""
import json

import pytest

from cloud_edge_privacy.audit import AuditLog
from cloud_edge_privacy.core.context import CONTEXTS, sample_key
from cloud_edge_privacy.errors import CloudCallError
from cloud_edge_privacy.models.cloud_client import CloudClient, Endpoint

X = {"doc_id": "d1", "text": "Ms Anna Berg, born 12 March 1961, lives in Oslo.",
     "instruction": "Write to Ms Anna Berg about her move."}


def _client(fake, tmp_path, **kw):
    ep = Endpoint(fake.base_url, "fake", "k-test", "remote")
    return CloudClient(ep, AuditLog(tmp_path / "audit.jsonl"), {"max_tokens": 8, "temperature": 0.0}, **kw)


def _lines(path):
    return [json.loads(l) for l in path.read_text().splitlines()] if path.exists() else []


def _pipeline(**cfg):
    from cloud_edge_privacy.core.module_configs import CloudModelConfig
    from cloud_edge_privacy.core.pipeline import EdgePipeline

    return EdgePipeline(CONTEXTS.get(), CloudModelConfig(**cfg))


def test_audit_line_per_http_attempt_written_before_sending(fake_cloud, tmp_path):
    fake_cloud.mode = "status:503"
    with pytest.raises(CloudCallError, match="HTTP 503 after 3 attempt"):
        _client(fake_cloud, tmp_path, max_retries=2, timeout_s=5).chat([{"role": "user", "content": "hi"}], {"s": 1})
    audit = _lines(tmp_path / "audit.jsonl")
    assert len(fake_cloud.requests) == 3
    assert [a["attempt"] for a in audit] == [1, 2, 3]            # one line per attempt, not per sample
    assert len({a["request_sha256"] for a in audit}) == 1         # the exact same bytes each time


def test_malformed_and_empty_responses_are_retried_then_name_the_endpoint(fake_cloud, tmp_path):
    for mode, what in (("malformed", "malformed response"), ("empty", "response without choices")):
        fake_cloud.mode, fake_cloud.requests = mode, []
        with pytest.raises(CloudCallError, match=rf"127\.0\.0\.1.*{what}.* after 3 attempt"):
            _client(fake_cloud, tmp_path, max_retries=0, malformed_retries=2).chat(
                [{"role": "user", "content": "hi"}], {})
        assert len(fake_cloud.requests) == 3


def test_wrong_api_key_is_a_clear_error(fake_cloud, tmp_path):
    fake_cloud.mode = "status:401"
    with pytest.raises(CloudCallError, match="rejected the API key"):
        _client(fake_cloud, tmp_path).chat([{"role": "user", "content": "hi"}], {})


def test_unreachable_endpoint_names_it(tmp_path):
    ep = Endpoint("http://127.0.0.1:9/v1", "m", "k", "remote")
    c = CloudClient(ep, AuditLog(tmp_path / "a.jsonl"), {}, timeout_s=2, max_retries=0)
    with pytest.raises(CloudCallError, match=r"127\.0\.0\.1:9.*unreachable"):
        c.chat([{"role": "user", "content": "hi"}], {})


def test_instruction_and_text_are_protected_and_audited(fake_cloud):
    res = _pipeline(privacy_method="placeholder", cache=False).cloud(X)
    body = fake_cloud.bodies_text()
    assert res.status == "ok", res.reason
    assert "Anna" not in body and "Berg" not in body and "[PERSON_1]" in body
    assert fake_cloud.requests[0]["auth"] == "Bearer k-test"
    audit = _lines(CONTEXTS.get().audit.path)
    assert audit[0]["event"] == "http_attempt" and audit[0]["messages"] == fake_cloud.requests[0]["body"]["messages"]


def test_fail_closed_sends_nothing(fake_cloud):
    p = _pipeline(privacy_method="placeholder", cache=False)

    class Boom:
        cache_size = 0

        def analyze_timed(self, text):
            raise RuntimeError("boom: Anna Berg")

    p.gateway._detector = Boom()
    res = p.cloud(X)
    assert fake_cloud.requests == []                              # verified on the server side
    assert res.status == "privacy_failure" and res.sent_messages is None
    assert "Anna" not in res.reason
    assert _lines(CONTEXTS.get().audit.path)[0]["sent"] is False


def test_silent_detector_is_caught_by_the_egress_guard(fake_cloud):
    """Detection finds nothing; the structured scan of the final body still finds the SSN and e-mail, and the
    guard's repair masks them (same operator) before anything is sent: the server never sees them."""
    p = _pipeline(privacy_method="placeholder", cache=False)

    class Silent:
        cache_size = 0

        def analyze_timed(self, text):
            return [], 0.0

    p.gateway._detector = Silent()
    res = p.cloud({"doc_id": "s", "text": "Reach me at jo.vik@example.org, SSN 078-05-1120.", "instruction": "Reply."})
    body = fake_cloud.bodies_text()
    assert res.status == "ok", res.reason
    assert "078-05-1120" not in body and "example.org" not in body and "[CODE_" in body
    events = _lines(CONTEXTS.get().audit.path)
    repaired = [e for e in events if e["event"] == "egress_repaired"]
    assert repaired and repaired[0]["repairs"].get("structured_identifier_in_clear/CODE") == 2
    # the repair is audited before the attempt, without the values
    assert events.index(repaired[0]) < [e["event"] for e in events].index("http_attempt")
    assert "078-05-1120" not in str(repaired) and "example.org" not in str(repaired)


def test_a_cloud_fault_is_one_samples_failure(fake_cloud):
    fake_cloud.mode = "fail_after:1"
    p = _pipeline(privacy_method="suppression", cache=False, max_retries=1)
    first = p.cloud(X)
    second = p.cloud(dict(X, doc_id="d2"))
    assert first.status == "ok" and first.answer == "summary"
    assert second.status == "cloud_failure" and "HTTP 500" in second.reason and second.answer == ""
    attempts = [a for a in _lines(CONTEXTS.get().audit.path) if a["event"] == "http_attempt"]
    assert len(attempts) == len(fake_cloud.requests) == 3          # 1 + (1 try + 1 retry)


def test_pseudonyms_are_restored_in_the_answer_on_the_edge(fake_cloud):
    """The fake echoes what it got; the edge puts the real names back, the cloud never saw them."""
    fake_cloud.mode = "echo"
    res = _pipeline(privacy_method="pseudonym", cache=False).cloud(X)
    assert res.status == "ok", res.reason
    assert "Anna Berg" not in fake_cloud.bodies_text()
    assert "Anna Berg" in res.answer and "Anna Berg" not in res.cloud_answer


def test_cache_hit_sends_nothing_and_is_audited(fake_cloud, monkeypatch, tmp_path):
    # its own cache: the fake's port is in the key, and an earlier run on the same port would answer the first call
    monkeypatch.setenv("CEP_CACHE_DIR", str(tmp_path / "cache"))
    _pipeline(privacy_method="placeholder").cloud(X)
    res = _pipeline(privacy_method="placeholder").cloud(X)
    assert len(fake_cloud.requests) == 1 and res.cloud_cache_hit is True
    assert [a["event"] for a in _lines(CONTEXTS.get().audit.path)] == ["http_attempt", "cache_hit"]


def test_base_url_without_model_name_is_an_error(fake_cloud, monkeypatch):
    monkeypatch.delenv("CEP_CLOUD_MODEL")
    res = _pipeline(privacy_method="placeholder", cache=False).cloud(X)
    assert res.status == "cloud_failure" and "CEP_CLOUD_MODEL" in res.reason


def test_router_decision_reaches_the_pipeline_through_the_context(fake_cloud):
    fake_cloud.mode = "echo"
    CONTEXTS.get().record_decision(sample_key(X), {"route": "collaborative"})
    p = _pipeline(privacy_method="placeholder", cache=False)
    p._refiner = type("R", (), {"refine": lambda self, i, t, s: {"answer": "final", "generation_ms": 1.0,
                                                                 "prompt_tokens": 1, "completion_tokens": 1}})()
    res = p.cloud(X)
    from cloud_edge_privacy.models.collaboration import SKETCH_SYSTEM

    body = fake_cloud.requests[0]["body"]["messages"]
    assert body[0]["content"] == SKETCH_SYSTEM and len(body) == 8   # system + 3 demos x 2 + prompt
    assert res.route == "collaborative" and res.answer == "final"
