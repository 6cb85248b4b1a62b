"""Issue 29 pieces without a proxy: text read as a reader reads it, identifiers, declared operator specs,
surrogate registration, picklable restorers; and the large lane end to end (a worker process, the time budget).
"""
import json
import pickle
import sys
from pathlib import Path

import httpx
import pytest

from cloud_edge_privacy.desensitization.base import operator_spec
from cloud_edge_privacy.desensitization.restore import OnePassRestorer, english_plural, link_like, token_verdict
from cloud_edge_privacy.detection.normalize import normalize
from cloud_edge_privacy.proxy.request import build_outgoing, ident_words, parse_body, words_ident
from cloud_edge_privacy.spans import Span

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))


@pytest.mark.parametrize("text,want", [
    ("mail margaret.thornton&#64;example.com now", "margaret.thornton&#64;example.com"),
    ("mail ｍａｒｇａｒｅｔ＠ｅｘａｍｐｌｅ.com now", "ｍａｒｇａｒｅｔ＠ｅｘａｍｐｌｅ.com"),
    ("mail margaret%40example.com now", "margaret%40example.com"),
    ("^margaret\\.thornton@example\\.com$", "margaret\\.thornton@example\\.com"),
])
def test_normalised_spans_cover_the_whole_encoded_surface(text, want):
    n = normalize(text)
    assert n.changed
    i = n.text.index("margaret")
    j = n.text.index(".com") + 4
    (span,) = n.spans_to_original([Span(i, j, "EMAIL")])
    assert text[span.start:span.end] == want


def test_plain_ascii_text_is_not_rewritten():
    n = normalize("Plain text, 100 % fine & good.")
    assert n.text == "Plain text, 100 % fine & good." and not n.changed


def test_detector_reads_encoded_values_and_a_pin_after_its_cue():
    from cloud_edge_privacy.detection import build_detector

    det = build_detector("structured")
    for text, value in [("write to margaret.thornton&#64;example.com", "margaret.thornton&#64;example.com"),
                        ("write to ｍａｒｇａｒｅｔ＠ｅｘａｍｐｌｅ.com", "ｍａｒｇａｒｅｔ＠ｅｘａｍｐｌｅ.com"),
                        ("the PIN 4821 opens it", "4821"), ("passcode 902211.", "902211")]:
        spans = det.analyze(text)
        assert any(text[s.start:s.end] == value for s in spans), (text, spans)


def test_identifiers_are_read_as_words_and_rebuilt():
    assert ident_words("notify_margaret_thornton") == "notify margaret thornton"
    assert ident_words("notifyMargaretThornton") == "notify Margaret Thornton"
    assert ident_words("get-HTTPResponse.v2") == "get HTTP Response v2"
    assert words_ident("notify Paul Agullo") == "notify_Paul_Agullo"
    out = build_outgoing({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function", "function": {
        "name": "notify_margaret_thornton", "parameters": {"type": "object", "properties": {"mailTo": {}}}}}]}, str)
    assert "notify margaret thornton" in out.texts and "mail To" in out.texts
    filled = out.fill(out.texts)  # nothing changed: the identifiers go out as the client wrote them
    assert filled["tools"][0]["function"]["name"] == "notify_margaret_thornton"
    assert list(filled["tools"][0]["function"]["parameters"]["properties"]) == ["mailTo"]


def test_schema_numbers_changed_by_protection_are_dropped_and_bad_numbers_name_their_field():
    out = build_outgoing({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function", "function": {
        "name": "f", "parameters": {"type": "integer", "enum": [1, 4111111111111111], "maximum": 100}}}]}, str)
    texts = ["4460027535503328" if t == "4111111111111111" else t for t in out.texts]
    filled = out.fill(texts)
    assert filled["tools"][0]["function"]["parameters"] == {"type": "integer", "enum": [1], "maximum": 100}
    assert out.dropped == 1
    body = parse_body(b'{"messages": [{"role": "user", "content": "x"}], "seed": NaN}')
    with pytest.raises(ValueError, match="^seed must be a finite number"):
        build_outgoing(body, str)


def test_operator_specs_declare_randomized_release_and_what_restores_them():
    assert operator_spec("pseudonym").restores == "surrogates" and not operator_spec("pseudonym").randomized_release
    assert operator_spec("placeholder").restores == "placeholders"
    assert operator_spec("suppression").restores == "" and operator_spec("generalization").restores == ""
    for dp in ("dp_numbers", "metric_dp_words", "selective_ldp", "uniform_ldp", "prism_ldp"):
        assert operator_spec(dp).randomized_release and operator_spec(dp).budgeted
    from cloud_edge_privacy.core.context import RunContext
    from cloud_edge_privacy.core.module_configs import CloudModelConfig
    from cloud_edge_privacy.core.pipeline import EdgePipeline
    from cloud_edge_privacy.randomness import Randomness

    ctx = RunContext(Path("/tmp/cep-spec-test"))
    rand = Randomness.deployment(b"k" * 32)
    assert EdgePipeline(ctx, CloudModelConfig(privacy_method="uniform_ldp", epsilon=8.0), rand,
                        detector=object()).randomized_release
    assert not EdgePipeline(ctx, CloudModelConfig(privacy_method="pseudonym"), rand,
                            detector=object()).randomized_release


def test_surrogates_are_registered_without_shared_punctuation_and_labels_and_plurals_read_english():
    r = OnePassRestorer()
    r.add("+1 555 0100)", "+44 20 7946 0958)")
    r.add("IBAN DE89 3704 0044 0532 0130 00.", "IBAN GB29 NWBK 6016 1331 9268 19.")
    r.add("Mastandrea", "Hawkins", name_token=True)
    assert set(r.mapping) == {"+1 555 0100", "DE89 3704 0044 0532 0130 00", "Mastandrea"}, r.mapping
    assert r.restore("Call +1 555 0100 or pay DE89 3704 0044 0532 0130 00. The Mastandreas came.") == \
        "Call +44 20 7946 0958 or pay GB29 NWBK 6016 1331 9268 19. The Hawkinses came."
    assert english_plural("Smith") == "Smiths" and english_plural("Birch") == "Birches"
    r.add("BZOT UO01 NGXP 8779", "IBAN GB29 NWBK 6016")  # the label was taken into the span and replaced
    assert r.restore("UO01 NGXP 8779 and BZOT UO01 NGXP 8779") == "GB29 NWBK 6016 and IBAN GB29 NWBK 6016"


def test_restorers_survive_pickling_for_the_large_lane():
    r = OnePassRestorer({"Paul Agullo": "John Smith"}, given_name=lambda w: w == "Gustavo")
    back = pickle.loads(pickle.dumps(r))
    assert back.mapping == r.mapping and back.given_name is None and back.had_given_name
    assert back.restore("Dear Paul Agullo.") == "Dear John Smith."


@pytest.mark.parametrize("token,linky", [("https://a.example/x", True), ("//h/p", True), ("a@b.example", True),
                                        ("www.a", True), ("203.0.113.7", True), ("[2001:db8::1]", True),
                                        ("x%20y", True), ("data:x", True), ("Smith,", False), ("(Smith)", False),
                                        ("Smith's", False), ("e.g.", True)])  # conservative: a dotted word reads as a host
def test_link_like_tokens(token, linky):
    assert link_like(token) is linky


def test_token_verdicts():
    t = "a Lundstrom's b x.Lundstrom c Lundstrom-Jones d 'Lundstrom' e"
    verdicts = [token_verdict(t, i, i + 9) for i in [k for k in range(len(t)) if t.startswith("Lundstrom", k)]]
    assert verdicts == ["prose", "link", "glued", "prose"]


def test_large_lane_protects_in_a_worker_process_and_stops_at_the_time_budget(tmp_path):
    """A request over large_request_chars is protected in the separate process (its restorer comes back and
    restores); past the privacy time budget the request is a 422 and nothing is sent."""
    from fakes.fake_openai import FakeOpenAI
    from test_proxy import Proxy

    big = "Please write to Mr John Smith (john.smith@example.com) about his appeal. " + "The file is long. " * 20
    with FakeOpenAI(mode="echo") as fake:
        with Proxy(fake.base_url, tmp_path, method="pseudonym", large_request_chars=200) as p:
            r = httpx.post(f"{p.base_url}/chat/completions", timeout=600,
                           json={"model": "m", "messages": [{"role": "user", "content": big}]})
            assert r.status_code == 200, r.text
            assert r.json()["choices"][0]["message"]["content"] == big
            assert "john" not in fake.bodies_text().lower()
            assert [a.get("lane") for a in p.audit_lines() if a.get("event") == "http_attempt"][-1] == "process"
            small = httpx.post(f"{p.base_url}/chat/completions", timeout=600,
                               json={"model": "m", "messages": [{"role": "user", "content": "Hi Mr John Smith."}]})
            assert small.status_code == 200 and small.json()["choices"][0]["message"]["content"] == "Hi Mr John Smith."
            lane = p.engine.lane
            lane.settings = lane.settings.model_copy(update={"privacy_time_budget_s": 0.001})
            n = len(fake.requests)
            r = httpx.post(f"{p.base_url}/chat/completions", timeout=600,
                           json={"model": "m", "messages": [{"role": "user", "content": big + " Again."}]})
            assert r.status_code == 422 and r.json()["error"]["code"] == "privacy_budget_exceeded", r.text
            assert len(fake.requests) == n and lane._proc is None  # nothing sent; the worker was stopped
    assert json.loads(json.dumps(r.json()))["error"]["type"] == "privacy_gateway_error"


FUZZ_PIECES = ["Paul Agullo", "Lundstrom", "[PERSON_1]", "paul.agullo@mail.example", "18 August 2024", " ", " ", "\n",
               "\n\n", "`", "```", "~~~", "    ", "<img src=", ">", "[x](", ")", "https://a.example/?n=", "said ",
               "Hernandez ", "- ", "# ", "> ", "---\n", "x", ".", ",", "'", "\n    ", "**", "|", "[r]: ", "![y][r]"]
FUZZ_REALS = ["smith", "hawkins", "eva berg", "3 may 2021"]


def _fuzz_restorer():
    r = OnePassRestorer()
    for k, v in {"Paul Agullo": "John Smith", "Agullo": "Smith", "Paul": "John", "18 August 2024": "3 May 2021",
                 "paul.agullo@mail.example": "john.smith@example.com", "[PERSON_1]": "Eva Berg",
                 "Lundstrom": "Hawkins"}.items():
        r.add(k, v, name_token=k in ("Agullo", "Paul", "Lundstrom"))
    return r


def _followable(md, text):
    """Everything a client follows or runs in ``text`` (its own reading: link targets, titles, code, raw HTML,
    and whitespace-delimited tokens with URL/host/e-mail signs), except the real e-mail standing alone."""
    import re as _re

    acc = []

    def walk(tokens):
        for t in tokens:
            if t.type not in ("text", "inline", "image"):
                acc.extend([t.content or "", t.info or ""])
            acc.extend(str(v) for v in (t.attrs or {}).values())
            walk(t.children or [])

    walk(md.parse(text))
    runs = [w for w in _re.split(r"[ \t\n\r\f\v]+", text) if _re.search(r"://|//|www\.|@|\.[a-z]{2,}|[/?=&#<>]", w)
            and w.strip(".,;:!?()[]{}*_'\"`<>|-~#") != "john.smith@example.com"]
    return " ".join(acc + runs).lower()


def test_fuzz_random_adversarial_answers_restore_nothing_followable_and_streams_decide_the_same():
    import random

    from markdown_it import MarkdownIt

    from cloud_edge_privacy.desensitization.restore import StreamRestorer

    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    r = _fuzz_restorer()
    rnd = random.Random(29)
    for _ in range(1500):
        text = "".join(rnd.choice(FUZZ_PIECES) for _ in range(rnd.randint(1, 25)))
        want = r.restore_report(text)
        assert [v for v in FUZZ_REALS if v in _followable(md, want.text)] == [], (text, want.text)
        s, out, i = StreamRestorer(r), [], 0
        while i < len(text):
            k = rnd.randint(1, 6)
            out.append(s.feed(text[i:i + k]))
            i += k
        out.append(s.flush())
        assert ("".join(out), s.withheld) == (want.text, want.withheld), text
