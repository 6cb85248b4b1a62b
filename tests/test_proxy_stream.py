"""Streaming restoration, tool-argument restoration and proxy settings: no models, no network."""
import json
import random

import pytest

from cloud_edge_privacy.desensitization.restore import OnePassRestorer
from cloud_edge_privacy.errors import ConfigError
from cloud_edge_privacy.proxy.engine import restore_arguments
from cloud_edge_privacy.proxy.settings import ProxySettings, is_loopback, load_secrets, load_settings
from cloud_edge_privacy.proxy.stream import StreamRestorer, json_escaped_mapping

MAPPING = {"Anna Aldana": "John Smith", "Anna": "Mary", "[PERSON_1]": "Bob O'Neil", "Hall": "Berg",
           "[CODE_12]": "x@y.org"}
TEXTS = ["Hi Anna Aldana, Anna and [PERSON_1] met Hall. Annabel Hallo xAnna ANNA ALDANA",
         "Anna  Aldana", "Anna", "[PERSON_1][PERSON_1]Anna", "[CODE_1] [CODE_12] [CODE_", "no surrogate here",
         "Anna Aldana's", "Anna\nAldana", "Hall"]


def _stream(mapping, text, rnd, max_chunk=5):
    s, out, i = StreamRestorer(mapping), [], 0
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
    s = StreamRestorer(MAPPING)
    assert s.feed("Dear An") == "Dear "        # "An" may become "Anna Aldana"
    assert s.feed("na Al") == ""               # still a prefix
    assert s.feed("dana, hi") == "John Smith, hi"
    assert s.feed(" [PERS") == " "
    assert s.feed("ON_1] ok") == "Bob O'Neil ok"
    assert s.flush() == ""
    assert s.feed("bye An") == "bye "
    assert s.flush() == "An"                   # end of stream: the held tail is released as it is


def test_stream_without_mapping_is_a_pass_through():
    s = StreamRestorer({})
    assert [s.feed("a"), s.feed("bc"), s.flush()] == ["a", "bc", ""]


def test_tool_arguments_restored_inside_json_with_escaping():
    restore = OnePassRestorer(MAPPING).restore
    args = json.dumps({"who": "[PERSON_1]", "list": ["Anna Aldana", 3], "Hall": True})
    out = json.loads(restore_arguments(args, restore))
    assert out == {"who": "Bob O'Neil", "list": ["John Smith", 3], "Berg": True}
    assert restore_arguments("not json Anna", restore) == "not json Mary"
    # streamed arguments are JSON text: the escaped mapping keeps the JSON valid for any original
    esc = json_escaped_mapping({"[PERSON_1]": 'Jo "JJ" Müller'})
    text = json.dumps({"name": "[PERSON_1]"})
    got = "".join(_stream(esc, text, random.Random(1), 2))
    assert json.loads(got) == {"name": 'Jo "JJ" Müller'}


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
    """Stands in for engine.Prepared: only the two restorer factories are used by the chunk restorer."""

    def __init__(self, mapping):
        from cloud_edge_privacy.proxy.engine import Prepared

        self.mapping = lambda: dict(mapping)
        self._ignore_case = lambda: True
        self.text_restorer = lambda: Prepared.text_restorer(self)
        self.arguments_restorer = lambda: Prepared.arguments_restorer(self)


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
    from cloud_edge_privacy.proxy.app import _ChunkRestorer

    prepared = _Prepared({"[PERSON_1]": 'Jo "JJ" Smith', "[PERSON_2]": "Ann Lee"})
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
    assert args.func is cli.run and args.host == "127.0.0.1" and args.method == "placeholder"
    env = {k: v for k, v in os.environ.items() if k != "CEP_PROXY_CLIENT_KEY"}
    r = subprocess.run([sys.executable, "-m", "cloud_edge_privacy.proxy", "--upstream", "http://127.0.0.1:9/v1",
                        "--host", "0.0.0.0"], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 2 and "CEP_PROXY_CLIENT_KEY" in r.stderr
