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
