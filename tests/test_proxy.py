"""The privacy proxy end to end: the real ``openai`` client -> proxy (uvicorn on 127.0.0.1) -> a logging
fake upstream that echoes the last user message (streamed in 3-character chunks).

Each test that answers a known failure of another tool names it (docs/proxy.md has the table).
The privacy method is ``placeholder`` (restorable, deterministic within a request); the detectors are the
real ``default`` preset and the ``structured`` egress-guard preset.
"""
import hashlib
import json
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import openai
import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from fakes.fake_openai import FakeOpenAI  # noqa: E402

KEY = "5f" * 32
NAMES = ["John Smith", "Maria Garcia"]
PLANTED = NAMES + ["john.smith@example.com", "+44 20 7946 0958"]
PROMPT = ("Please summarise: Mr John Smith (john.smith@example.com, phone +44 20 7946 0958) met "
          "Maria Garcia on 3 May 2021.")
TOOLS = [{"type": "function", "function": {"name": "save_note", "description": "store a note",
                                           "parameters": {"type": "object",
                                                          "properties": {"text": {"type": "string"}}}}}]


def _leaks(fake):
    sent = fake.bodies_text()
    return [p for p in PLANTED if p.lower() in sent.lower()]


class Proxy:
    """A proxy app served by uvicorn in a thread; ``engine`` may be shared with other instances."""

    def __init__(self, upstream, audit_dir, engine=None, client_key="", transport=None, **extra):
        import uvicorn

        from cloud_edge_privacy.models.local_server import free_port
        from cloud_edge_privacy.proxy import Secrets, create_app, load_settings
        from cloud_edge_privacy.randomness import Randomness

        self.port = free_port()
        values = {"port": self.port, "method": "placeholder", "audit_dir": str(audit_dir), "max_retries": 2}
        values.update({"upstream": upstream} if upstream else {}, **extra)
        self.settings = load_settings(values)
        self.app = create_app(self.settings, Secrets("sk-upstream-0123456789", client_key),
                              randomness=Randomness.deployment(bytes.fromhex(KEY)), engine=engine,
                              transport=transport)
        self.engine = self.app.state.proxy.engine
        self.server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=self.port,
                                                    log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self):
        self.thread.start()
        deadline = time.time() + 30
        while not self.server.started:
            assert time.time() < deadline, "proxy did not start"
            time.sleep(0.02)
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(timeout=10)

    def client(self, api_key="client-key-not-for-upstream", **kw):
        return openai.OpenAI(base_url=self.base_url, api_key=api_key, max_retries=0, **kw)

    def audit_lines(self):
        path = Path(self.settings.audit_dir) / "proxy_audit.jsonl"
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def fake():
    with FakeOpenAI(mode="echo", chunk=3) as f:
        yield f


@pytest.fixture(scope="module")
def proxy(fake, tmp_path_factory):
    with Proxy(fake.base_url, tmp_path_factory.mktemp("audit")) as p:
        yield p


@pytest.fixture(autouse=True)
def fresh_fake(request):
    """Each test starts with an empty request log and the echo mode."""
    if "fake" in request.fixturenames:
        f = request.getfixturevalue("fake")
        with f.lock:
            f.requests.clear()
        f.mode = "echo"
    yield


def test_plain_answer_is_restored_and_nothing_planted_reaches_upstream(proxy, fake):
    """Presidio#1151 (deanonymize does not invert anonymize): the echoed answer comes back byte for byte."""
    r = proxy.client().chat.completions.create(model="m", messages=[{"role": "user", "content": PROMPT}])
    assert r.choices[0].message.content == PROMPT
    assert len(fake.requests) == 1 and _leaks(fake) == []
    sent = fake.requests[0]["body"]["messages"][0]["content"]
    assert "[PERSON_1]" in sent and "[PERSON_2]" in sent


def test_streamed_answer_is_restored_incrementally(proxy, fake):
    """LiteLLM#28316/#31503/#31756 (re-masked or fully buffered streams): the client gets the originals, in
    many chunks, each character once."""
    pieces = []
    stream = proxy.client().chat.completions.create(model="m", stream=True,
                                                    messages=[{"role": "user", "content": PROMPT}])
    for chunk in stream:
        for ch in chunk.choices:
            if ch.delta.content:
                pieces.append(ch.delta.content)
    assert "".join(pieces) == PROMPT
    assert len(pieces) >= 10  # relayed as it comes (the fake sends ~30 chunks; surrogates being formed are held), not one blob
    assert _leaks(fake) == [] and fake.requests[0]["body"]["stream"] is True


def test_tool_call_arguments_restored_and_tool_results_protected(proxy, fake):
    """LiteLLM#31950 (tool_calls arguments never restored), and tool results sent back are protected."""
    c = proxy.client()
    r = c.chat.completions.create(model="m", tools=TOOLS, messages=[{"role": "user", "content": PROMPT}])
    call = r.choices[0].message.tool_calls[0]
    assert call.function.name == "save_note"
    assert json.loads(call.function.arguments) == {"text": PROMPT}
    # second turn: the client's history holds the originals, the tool result names someone new
    history = [{"role": "user", "content": PROMPT},
               {"role": "assistant", "content": None, "tool_calls": [
                   {"id": call.id, "type": "function",
                    "function": {"name": "save_note", "arguments": call.function.arguments}}]},
               {"role": "tool", "tool_call_id": call.id, "content": "Saved for Mr John Smith by Ms Eva Lindqvist."},
               {"role": "user", "content": "Who saved it for Mr John Smith?"}]
    r2 = c.chat.completions.create(model="m", tools=TOOLS, messages=history)
    assert json.loads(r2.choices[0].message.tool_calls[0].function.arguments) == {
        "text": "Who saved it for Mr John Smith?"}
    assert _leaks(fake) == [] and "lindqvist" not in fake.bodies_text().lower()
    first, second = (req["body"]["messages"] for req in fake.requests)
    # stateless consistency: the same person has the same placeholder in both requests
    assert first[0]["content"] == second[0]["content"]
    assert "[PERSON_1]" in second[3]["content"]


def test_same_key_gives_same_surrogates_across_requests_and_restarts(proxy):
    """LLM Guard PR #82 (vault lost between calls): pseudonyms are an HMAC of the value under the key, so a
    fresh gateway (a restarted proxy) with the same key protects and restores the same way; another key
    does not."""
    from cloud_edge_privacy.core.gateway import PrivacyGateway
    from cloud_edge_privacy.randomness import Randomness

    text = "Mr John Smith wrote to Maria Garcia."
    with proxy.engine.pipeline() as p:
        det = p.detector
        outs = [PrivacyGateway("pseudonym", Randomness.deployment(k), det).protect(text).fields[0]
                for k in (bytes.fromhex(KEY), bytes.fromhex(KEY), b"another-key-of-32-bytes-.......")]
        restored = PrivacyGateway("pseudonym", Randomness.deployment(bytes.fromhex(KEY)), det).protect(text)
    assert outs[0] == outs[1] != text
    assert outs[2] != outs[0]
    assert not any(n in outs[0] for n in NAMES)
    assert restored.restore(outs[0]) == text


def test_forced_detector_failure_returns_error_and_sends_nothing(proxy, fake):
    """LiteLLM#30728 (raw text forwarded when the analyzer errors): we fail closed."""
    def boom(text):
        raise RuntimeError("detector crashed on John Smith")  # the message must not reach the client

    saved = []

    def patch(p):
        saved.append((p.detector, p.detector.analyze_timed))
        p.detector.analyze_timed = boom

    proxy.engine.for_each_pipeline(patch)
    try:
        with pytest.raises(openai.InternalServerError) as err:
            proxy.client().chat.completions.create(model="m", messages=[{"role": "user", "content": PROMPT}])
        with pytest.raises(openai.InternalServerError):
            proxy.client().chat.completions.create(model="m", stream=True,
                                                   messages=[{"role": "user", "content": PROMPT}])
    finally:
        for det, fn in saved:
            det.analyze_timed = fn
    assert fake.requests == []
    body = err.value.response.json()
    assert body["error"]["type"] == "privacy_gateway_error" and "nothing was sent" in body["error"]["message"]
    assert "John" not in json.dumps(body)
    blocked = [line for line in proxy.audit_lines() if line["event"] == "blocked"]
    assert blocked and blocked[-1]["sent"] is False


def test_egress_guard_blocks_an_operator_that_leaves_identifiers(proxy, fake):
    """An operator that silently fails (returns the text unchanged): the guard stops the request."""
    from cloud_edge_privacy.desensitization.base import Desensitized

    saved = []

    def patch(p):
        saved.append((p.gateway, p.gateway.operator))
        p.gateway.operator = lambda text, spans, rand, scope="": Desensitized(text, [], "placeholder")

    proxy.engine.for_each_pipeline(patch)
    try:
        with pytest.raises(openai.UnprocessableEntityError) as err:
            proxy.client().chat.completions.create(model="m", messages=[{"role": "user", "content": PROMPT}])
    finally:
        for gw, op in saved:
            gw.operator = op
    assert fake.requests == []
    assert err.value.response.json()["error"]["code"] == "egress_blocked"


def test_upstream_500_is_passed_through_without_retry(proxy, fake):
    fake.mode = "status:500"
    with pytest.raises(openai.InternalServerError) as err:
        proxy.client().chat.completions.create(model="m", messages=[{"role": "user", "content": PROMPT}])
    assert err.value.status_code == 500 and err.value.response.json()["error"]["message"] == "fake error"
    assert len(fake.requests) == 1 and _leaks(fake) == []
    with pytest.raises(openai.InternalServerError):
        proxy.client().chat.completions.create(model="m", stream=True,
                                               messages=[{"role": "user", "content": PROMPT}])


def test_upstream_503_is_retried_a_bounded_number_of_times_then_passed_through(proxy, fake):
    fake.mode = "status:503"
    with pytest.raises(openai.APIStatusError) as err:
        proxy.client().chat.completions.create(model="m", messages=[{"role": "user", "content": "hello"}])
    assert err.value.status_code == 503
    assert len(fake.requests) == proxy.settings.max_retries + 1
    attempts = [line for line in proxy.audit_lines() if line["event"] == "http_attempt"][-3:]
    assert [a["attempt"] for a in attempts] == [1, 2, 3] and len({a["request_id"] for a in attempts}) == 1


def test_unreachable_upstream_gives_502(fake, tmp_path, proxy):
    from cloud_edge_privacy.models.local_server import free_port

    with Proxy(f"http://127.0.0.1:{free_port()}/v1", tmp_path, engine=proxy.engine, max_retries=1) as p:
        with pytest.raises(openai.APIStatusError) as err:
            p.client().chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert err.value.status_code == 502 and err.value.response.json()["error"]["type"] == "upstream_error"


def test_audit_line_before_each_attempt_holds_hashes_and_counts_not_values(proxy, fake):
    proxy.client().chat.completions.create(model="m", messages=[{"role": "user", "content": PROMPT}])
    attempt = [line for line in proxy.audit_lines() if line["event"] == "http_attempt"][-1]
    # the hash is of the exact bytes the upstream received
    got = json.dumps(fake.requests[0]["body"], ensure_ascii=False).encode("utf-8")
    assert attempt["request_sha256"] == hashlib.sha256(got).hexdigest()
    assert attempt["detected"]["PERSON"] >= 2 and attempt["detected"]["CODE"] >= 2
    assert attempt["method"] == "placeholder" and attempt["time"] <= fake.requests[0]["time"]
    raw = (Path(proxy.settings.audit_dir) / "proxy_audit.jsonl").read_text(encoding="utf-8")
    assert not any(p.lower() in raw.lower() for p in PLANTED) and "[PERSON_1]" not in raw


def test_upstream_key_comes_from_settings_only_and_client_key_never_forwarded(proxy, fake):
    proxy.client(api_key="client-secret-abc").chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hello"}])
    assert fake.requests[0]["auth"] == "Bearer sk-upstream-0123456789"
    health = httpx.get(f"http://127.0.0.1:{proxy.port}/healthz").text
    assert "sk-upstream" not in health and KEY not in health
    models = proxy.client().models.list()
    assert [m.id for m in models.data] == ["fake"]


def test_client_key_enforced_when_configured(proxy, fake, tmp_path):
    with Proxy(fake.base_url, tmp_path, engine=proxy.engine, client_key="k" * 24) as p:
        with pytest.raises(openai.AuthenticationError):
            p.client(api_key="wrong").chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        r = p.client(api_key="k" * 24).chat.completions.create(model="m",
                                                               messages=[{"role": "user", "content": "x"}])
    assert r.choices[0].message.content == "x" and len(fake.requests) == 1


def test_request_limits_and_unscannable_content_send_nothing(proxy, fake):
    url = f"http://127.0.0.1:{proxy.port}/v1/chat/completions"
    big = {"model": "m", "messages": [{"role": "user", "content": "a" * (proxy.settings.max_body_bytes + 10)}]}
    assert httpx.post(url, json=big, timeout=30).status_code == 413
    image = {"model": "m", "messages": [{"role": "user", "content": [
        {"type": "text", "text": "who is this?"}, {"type": "image_url", "image_url": {"url": "data:,"}}]}]}
    r = httpx.post(url, json=image, timeout=30)
    assert r.status_code == 400 and "cannot check" in r.json()["error"]["message"]
    assert httpx.post(url, content=b"{not json", timeout=30).status_code == 400
    assert fake.requests == []


def test_concurrent_requests_get_their_own_names_back(proxy, fake):
    people = ["Mr Olaf Berntsen", "Ms Chiara Bellini", "Mr Tomasz Nowak", "Ms Ingrid Solberg",
              "Mr Pedro Alvarez", "Ms Aiko Tanaka"]

    def ask(name):
        msg = f"Please write to {name} about the appeal."
        stream = proxy.client().chat.completions.create(model="m", stream=True,
                                                        messages=[{"role": "user", "content": msg}])
        return msg, "".join(c.choices[0].delta.content or "" for c in stream if c.choices)

    with ThreadPoolExecutor(6) as pool:
        results = list(pool.map(ask, people))
    assert all(sent == got for sent, got in results)
    sent = fake.bodies_text()
    assert len(fake.requests) == 6 and not any(n.split()[-1] in sent for n in people)


def test_pseudonym_answers_stream_back_exactly_as_plain_restoration(proxy):
    """With keyed pseudonyms (the proxy's default method) the streamed restorer built from the vault gives the
    same text as the operator's own restorer, for chunks that split every surrogate."""
    from cloud_edge_privacy.core.gateway import PrivacyGateway
    from cloud_edge_privacy.proxy.engine import Prepared
    from cloud_edge_privacy.randomness import Randomness

    text = "Mr John Smith wrote to Maria Garcia on 3 May 2021. Smith's reply reached Garcia."
    with proxy.engine.pipeline() as p:
        prot = PrivacyGateway("pseudonym", Randomness.deployment(bytes.fromhex(KEY)), p.detector).protect(text)
    sent = prot.fields[0]
    assert not any(n in sent for n in NAMES)
    prepared = Prepared(prot, {}, {}, {})
    for size in (1, 2, 3, 7):
        r = prepared.text_restorer()
        out = "".join(r.feed(sent[i:i + size]) for i in range(0, len(sent), size)) + r.flush()
        assert out == prot.restore(sent) == text


def test_participant_names_are_not_forwarded_and_a_json_answer_to_a_stream_request_is_streamed(proxy, tmp_path):
    """An upstream that ignores ``stream: true`` still gives the client a (restored) stream."""
    seen = []

    def handler(request):
        body = json.loads(request.content)
        seen.append(body)
        text = body["messages"][-1]["content"]
        return httpx.Response(200, json={"id": "j", "object": "chat.completion", "created": 0, "model": "m",
                                         "choices": [{"index": 0, "finish_reason": "stop",
                                                      "message": {"role": "assistant", "content": text}}]})

    with Proxy("http://upstream.invalid/v1", tmp_path, engine=proxy.engine,
               transport=httpx.MockTransport(handler)) as p:
        stream = p.client().chat.completions.create(
            model="m", stream=True, messages=[{"role": "user", "name": "john_smith", "content": PROMPT}])
        got = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert got == PROMPT
    assert "name" not in seen[0]["messages"][0] and "smith" not in json.dumps(seen).lower()


def test_app_refuses_a_public_bind_without_client_key(proxy, tmp_path):
    from cloud_edge_privacy.errors import ConfigError
    from cloud_edge_privacy.proxy import Secrets, create_app, load_settings

    s = load_settings({"upstream": "http://127.0.0.1:9/v1", "host": "0.0.0.0", "method": "placeholder",
                       "audit_dir": str(tmp_path)})
    with pytest.raises(ConfigError, match="client key"):
        create_app(s, Secrets(), engine=proxy.engine)


def test_default_method_pseudonym_end_to_end(fake, tmp_path):
    """The proxy's default method: keyed pseudonyms; plain, streamed and tool-call answers come back with the
    real names, and no planted value reaches the upstream."""
    with Proxy(fake.base_url, tmp_path, method="pseudonym") as p:
        client = p.client()
        r = client.chat.completions.create(model="m", messages=[{"role": "user", "content": PROMPT}])
        assert r.choices[0].message.content == PROMPT
        chunks = [c.choices[0].delta.content or "" for c in client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": PROMPT}], stream=True) if c.choices]
        assert "".join(chunks) == PROMPT
        t = client.chat.completions.create(model="m", messages=[{"role": "user", "content": PROMPT}], tools=TOOLS)
        assert json.loads(t.choices[0].message.tool_calls[0].function.arguments)["text"] == PROMPT
    assert len(fake.requests) == 3 and _leaks(fake) == []


def test_upstreams_route_by_model_name_as_litellm_model_list(tmp_path):
    """A config's ``upstreams`` (LiteLLM's model_list): each client model name goes to its own upstream under
    the configured upstream model name; an unknown name is a 400 and sends nothing; /v1/models lists them."""
    with FakeOpenAI(mode="echo") as a, FakeOpenAI(mode="echo") as b:
        routes = [{"model_name": "fast", "base_url": a.base_url, "model": "qwen-small"},
                  {"model_name": "big", "base_url": b.base_url}]
        with Proxy(None, tmp_path, upstreams=routes) as p:
            c = p.client()
            assert c.chat.completions.create(model="fast", messages=[{"role": "user", "content": PROMPT}]) \
                .choices[0].message.content == PROMPT
            c.chat.completions.create(model="big", messages=[{"role": "user", "content": "hello"}])
            with pytest.raises(openai.BadRequestError, match="unknown model"):
                c.chat.completions.create(model="other", messages=[{"role": "user", "content": "hello"}])
            assert sorted(m.id for m in c.models.list().data) == ["big", "fast"]
        assert [r["body"]["model"] for r in a.requests] == ["qwen-small"]
        assert [r["body"]["model"] for r in b.requests] == ["big"]
        assert _leaks(a) == []
    from cloud_edge_privacy.proxy.settings import load_secrets, load_settings

    s = load_settings({"upstreams": [dict(routes[0], api_key_env="KEY_A")]})
    assert load_secrets(s, env={"KEY_A": "sk-a-123"}).route_keys == {"fast": "sk-a-123"}
    with pytest.raises(Exception, match="no upstream"):
        load_settings({"method": "pseudonym"})
