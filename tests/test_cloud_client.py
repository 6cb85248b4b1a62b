"""Cloud client behaviour against a small HTTP server on 127.0.0.1 that records every request.

The server is a test double for the remote endpoint (the real-model path is covered in test_end_to_end).
"""
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from cloud_edge_privacy.errors import CloudCallError


class Recorder(BaseHTTPRequestHandler):
    requests, fail_first, status = [], 0, 200

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Recorder.requests.append({"body": body, "auth": self.headers.get("Authorization")})
        if Recorder.fail_first > 0:
            Recorder.fail_first -= 1
            self.send_response(500)
            self.end_headers()
            return
        if Recorder.status != 200:
            self.send_response(Recorder.status)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"error": {"message": "bad key"}}')
            return
        payload = {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                   "choices": [{"index": 0, "finish_reason": "stop",
                                "message": {"role": "assistant", "content": "summary"}}],
                   "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}}
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def server(monkeypatch, tmp_path):
    Recorder.requests, Recorder.fail_first, Recorder.status = [], 0, 200
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    monkeypatch.setenv("CEP_CLOUD_BASE_URL", f"http://127.0.0.1:{srv.server_address[1]}/v1")
    monkeypatch.setenv("CEP_CLOUD_MODEL", "m")
    monkeypatch.setenv("CEP_CLOUD_API_KEY", "k-test")
    monkeypatch.setenv("CEP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("RESULT_SAVED_URL", str(tmp_path / "out"))
    yield srv
    srv.shutdown()


X = {"doc_id": "d1", "text": "Ms Anna Berg, born 12 March 1961, lives in Oslo.", "instruction": "Summarize."}


def _model(**kw):
    from cloud_edge_privacy.models.openai_cloud import OpenAICloudModel
    return OpenAICloudModel(**kw)


def _audit(tmp_path):
    return [json.loads(l) for l in (tmp_path / "out" / "cloud_audit.jsonl").read_text().splitlines()]


def test_sends_only_desensitized_text_and_audits_it(server, tmp_path):
    res = _model(privacy_method="placeholder").inference(X, post_process=None, mining_mode="x")
    sent = json.dumps(Recorder.requests[0]["body"]["messages"])
    assert "Anna Berg" not in sent and "[PERSON_1]" in sent
    assert Recorder.requests[0]["auth"] == "Bearer k-test"
    assert res["answer"] == "summary" and res["tokens"]["cloud_prompt"] == 11
    audit = _audit(tmp_path)
    assert audit[0]["messages"] == Recorder.requests[0]["body"]["messages"]   # exactly what was sent


def test_fail_closed_sends_nothing(server, tmp_path):
    m = _model(privacy_method="placeholder")

    class Boom:
        def analyze(self, text):
            raise RuntimeError("boom")

    m.gateway._detector = Boom()
    res = m.inference(X)
    assert Recorder.requests == []                    # verified on the server side
    assert res["status"] == "privacy_failure" and res["sent_messages"] is None
    assert _audit(tmp_path)[0]["sent"] is False


def test_retries_server_errors_then_succeeds(server, monkeypatch):
    monkeypatch.setattr("time.sleep", lambda s: None)
    Recorder.fail_first = 2
    res = _model(privacy_method="suppression", cache=False, max_retries=3).inference(X)
    assert res["answer"] == "summary" and len(Recorder.requests) == 3


def test_gives_up_after_bounded_retries(server, monkeypatch):
    monkeypatch.setattr("time.sleep", lambda s: None)
    Recorder.fail_first = 10
    with pytest.raises(CloudCallError, match="unreachable after 3 attempts"):
        _model(privacy_method="suppression", cache=False, max_retries=2).inference(X)
    assert len(Recorder.requests) == 3


def test_wrong_api_key_is_a_clear_error(server):
    Recorder.status = 401
    with pytest.raises(CloudCallError, match=r"rejected the API key from \$CEP_CLOUD_API_KEY"):
        _model(cache=False).inference(X)


def test_unreachable_endpoint(monkeypatch, tmp_path):
    monkeypatch.setattr("time.sleep", lambda s: None)
    monkeypatch.setenv("CEP_CLOUD_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("CEP_CLOUD_MODEL", "m")
    monkeypatch.setenv("CEP_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("RESULT_SAVED_URL", str(tmp_path / "out"))
    with pytest.raises(CloudCallError, match="127.0.0.1:9.*unreachable"):
        _model(cache=False, max_retries=1).inference(X)


def test_cache_hits_across_instances(server):
    _model(privacy_method="placeholder").inference(X)
    res = _model(privacy_method="placeholder").inference(X)
    assert len(Recorder.requests) == 1 and res["cloud_cache_hit"] is True


def test_base_url_without_model_name_is_an_error(server, monkeypatch):
    monkeypatch.delenv("CEP_CLOUD_MODEL")
    with pytest.raises(CloudCallError, match="CEP_CLOUD_MODEL"):
        _model().inference(X)


@pytest.mark.llm
def test_collaborative_route_sends_a_sketch_request_and_refines_on_the_edge(server):
    """PRISM stage 4: few-shot sketch request to the cloud, final answer by the real local model."""
    from cloud_edge_privacy import decision_store
    from cloud_edge_privacy.collaboration import SKETCH_SYSTEM
    from cloud_edge_privacy.models.llama_edge import as_sample

    decision_store.record(decision_store.sample_key(as_sample(X)), {"route": "collaborative"})
    res = _model(privacy_method="placeholder", max_tokens=24).inference(X)
    body = Recorder.requests[0]["body"]["messages"]
    assert body[0]["content"] == SKETCH_SYSTEM and len(body) == 8          # system + 3 demos x 2 + prompt
    assert "Anna Berg" not in json.dumps(body)
    assert res["route"] == "collaborative" and res["sketch"] == "summary"
    assert res["answer"] and res["timings_ms"]["refinement"] > 0 and res["tokens"]["edge_completion"] > 0


def test_pseudonyms_are_restored_in_the_answer_on_the_edge(server, monkeypatch):
    """The server echoes the surrogate name; the edge puts the real one back, the cloud never saw it."""
    m = _model(privacy_method="pseudonym", cache=False)
    sent = {}

    def fake_chat(messages):
        sent["messages"] = messages
        surrogate = m.gateway.protect(X["text"]).result.replacements[0].replacement
        return {"answer": f"{surrogate} lives abroad.", "prompt_tokens": 1, "completion_tokens": 1,
                "call_ms": 1.0, "cache_hit": False}

    monkeypatch.setattr(m, "chat", fake_chat)
    res = m.inference(X)
    assert "Anna Berg" not in json.dumps(sent["messages"])
    assert res["answer"] == "Ms Anna Berg lives abroad." and "Anna Berg" not in res["cloud_answer"]


def test_cache_hits_across_processes(server, tmp_path):
    """A second *process* with the same endpoint, model and messages is served from the disk cache."""
    import os
    import subprocess
    import sys

    code = ("import json; from cloud_edge_privacy.models.openai_cloud import OpenAICloudModel as M; "
            f"r = M(privacy_method='placeholder').inference({X!r}); print(json.dumps(r['cloud_cache_hit']))")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ),
                           timeout=120) for _ in range(2)]
    assert [r.stdout.strip().splitlines()[-1] for r in runs] == ["false", "true"], [r.stderr[-500:] for r in runs]
    assert len(Recorder.requests) == 1
