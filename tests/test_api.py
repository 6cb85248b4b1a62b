"""The public API (analyze -> protect -> restore, fine-grained types, per-type policy) and the CLI around it."""
import io
import json
import sys
import warnings

import pytest

TEXT = ("Write to jane.roe@example.org or call +44 20 7946 0958 about IBAN GB82 WEST 1234 5698 7654 32; "
        "the card 4111 1111 1111 1111 was used from 203.0.113.7, see https://intranet.example.net/u/jroe.")


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("CEP_SECRET_KEY", "00" * 32)


def test_package_root_exports_the_api():
    import cloud_edge_privacy as cep

    for name in ("Gateway", "Entity", "Protected", "analyze", "protect", "restore", "ENTITY_TYPES",
                 "PrivacyGateway", "Randomness", "__version__"):
        assert getattr(cep, name) is not None, name
    with pytest.raises(AttributeError):
        cep.no_such_thing


def test_every_fine_type_maps_to_a_tab_category():
    from cloud_edge_privacy import ENTITY_TYPES

    assert set(ENTITY_TYPES.values()) == {"PERSON", "CODE", "LOC", "ORG", "DATETIME", "DEM", "QUANTITY", "MISC"}
    for t in ("PERSON", "EMAIL", "PHONE", "IBAN", "CARD", "IP", "URL", "SECRET", "ID_NUMBER"):
        assert t in ENTITY_TYPES


def test_structured_identifiers_get_fine_types(key):
    from cloud_edge_privacy import analyze

    types = {e.type: e.text for e in analyze(TEXT, detector="structured")}
    assert types["EMAIL"] == "jane.roe@example.org"
    assert types["PHONE"] == "+44 20 7946 0958"
    assert "GB82 WEST 1234 5698 7654 32" in types["IBAN"]
    assert types["CARD"] == "4111 1111 1111 1111"
    assert types["IP"] == "203.0.113.7"
    assert "URL" in types
    secret = analyze("my api_key = sk-proj-abcdefghijklmnop1234", detector="structured")
    assert [e.type for e in secret] == ["SECRET"]


def test_per_type_policy_and_restore(key):
    from cloud_edge_privacy import Gateway

    gw = Gateway("placeholder", policy={"EMAIL": "pseudonym", "IP": "suppression"}, detector="structured")
    p = gw.protect(TEXT)
    for raw in ("jane.roe@example.org", "+44 20 7946 0958", "4111 1111 1111 1111", "203.0.113.7"):
        assert raw not in p.text
    by_type = {r.entity.type: r.replacement for r in p.replacements}
    assert "@" in by_type["EMAIL"] and not by_type["EMAIL"].startswith("[")      # a surrogate address
    assert by_type["PHONE"].startswith("[")                                         # the default method
    assert by_type["IP"] == "[REDACTED]"                                            # suppression
    answer = f"I will write to {by_type['EMAIL']} and call {by_type['PHONE']}."
    assert p.restore(answer) == "I will write to jane.roe@example.org and call +44 20 7946 0958."
    # the same key and scope give the same surrogate (keyed choice), another key another one
    assert Gateway("pseudonym", detector="structured").protect("x jane.roe@example.org").text == \
        Gateway("pseudonym", detector="structured").protect("x jane.roe@example.org").text


def test_default_detector_keeps_two_identifiers_apart_so_each_restores(key):
    """Seen as a user: the encoder read "Email john.smith@acme.com or call 555-123-4567" as one code, so one
    surrogate stood for both identifiers and "or call" ("... yw fzne 670-285-8294"), and an answer quoting the
    e-mail's surrogate could not be restored."""
    from cloud_edge_privacy import Gateway

    p = Gateway("pseudonym").protect("Email john.smith@acme.com or call 555-123-4567 to reach Jane.")
    assert " or call " in p.text
    by_type = {r.entity.type: r.replacement for r in p.replacements}
    assert "@" in by_type["EMAIL"] and " " not in by_type["EMAIL"]
    assert p.restore(f"I will write to {by_type['EMAIL']}.") == "I will write to john.smith@acme.com."
    assert p.restore(f"Call {by_type['PHONE']}.") == "Call 555-123-4567."


def test_keep_leaves_a_type_alone_and_the_guard_still_checks(key):
    from cloud_edge_privacy import Gateway
    from cloud_edge_privacy.errors import PrivacyGatewayError

    gw = Gateway("placeholder", policy={"URL": "keep"}, detector="structured")
    p = gw.protect("Docs at https://docs.python.org/3/ for jane.roe@example.org")
    assert "https://docs.python.org/3/" in p.text and "jane.roe@example.org" not in p.text
    # keeping an e-mail: the egress guard's independent check refuses to release it
    with pytest.raises(PrivacyGatewayError, match="egress guard"):
        Gateway("placeholder", policy={"EMAIL": "keep"}, detector="structured").protect("mail jane.roe@example.org")


def test_bad_policy_and_method_are_clear_errors(key):
    from cloud_edge_privacy import Gateway
    from cloud_edge_privacy.errors import BenchmarkError

    with pytest.raises(BenchmarkError, match="unknown entity type 'EMIAL'"):
        Gateway(policy={"EMIAL": "placeholder"})
    with pytest.raises(BenchmarkError, match="policy\\['EMAIL'\\]"):
        Gateway(policy={"EMAIL": "scramble"})
    with pytest.raises(BenchmarkError, match="privacy_method"):
        Gateway("scramble")


def test_deployment_randomness_by_default_with_a_note(monkeypatch):
    from cloud_edge_privacy import Gateway
    from cloud_edge_privacy import Randomness

    monkeypatch.delenv("CEP_SECRET_KEY", raising=False)
    with pytest.warns(UserWarning, match="CEP_SECRET_KEY is not set"):
        gw = Gateway("placeholder", detector="structured")
    assert gw.randomness.mode == "deployment" and not gw.randomness.persistent_key
    monkeypatch.setenv("CEP_SECRET_KEY", "11" * 32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gw = Gateway("placeholder", detector="structured")
    assert gw.randomness.persistent_key
    bench = Gateway("pseudonym", detector="structured", randomness=Randomness.benchmark(3))
    assert "benchmark" in bench.protect("x jane.roe@example.org").randomness


def _cli(args, stdin=None, monkeypatch=None, capsys=None):
    from cloud_edge_privacy.cli import main

    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_anonymize_plain_text_stdin_and_jsonl(key, monkeypatch, capsys, tmp_path):
    code, out, _ = _cli(["anonymize", "--detector", "structured", "--method", "placeholder", "--text",
                         "mail jane.roe@example.org"], capsys=capsys)
    assert code == 0 and out.strip() == "mail [CODE_1]"
    code, out, _ = _cli(["anonymize", "--detector", "structured", "--method", "placeholder"],
                        stdin="call +44 20 7946 0958 now\n", monkeypatch=monkeypatch, capsys=capsys)
    assert code == 0 and "+44" not in out and out.startswith("call [")
    lines = '{"id": "a", "text": "mail jane.roe@example.org"}\n{"text": "IP 203.0.113.7"}\n'
    code, out, _ = _cli(["anonymize", "--detector", "structured", "--method", "placeholder",
                         "--policy", "IP=suppression"], stdin=lines, monkeypatch=monkeypatch, capsys=capsys)
    recs = [json.loads(x) for x in out.splitlines()]
    assert code == 0 and [r["id"] for r in recs] == ["a", 2]
    assert recs[0]["entities"][0]["type"] == "EMAIL" and "jane" not in recs[0]["text"]
    f = tmp_path / "in.jsonl"
    f.write_text(lines)
    code, out, _ = _cli(["anonymize", "--detector", "structured", "--input", str(f), "--texts-out",
                         str(tmp_path / "out.jsonl")], capsys=capsys)
    assert code == 0 and len((tmp_path / "out.jsonl").read_text().splitlines()) == 2


def test_cli_bad_input_is_a_usage_error(key, monkeypatch, capsys, tmp_path):
    code, _, err = _cli(["anonymize", "--detector", "structured"], stdin='{"txt": 1}\n',
                        monkeypatch=monkeypatch, capsys=capsys)
    assert code == 2 and "line 1: expected an object with a string field 'text'" in err
    code, _, err = _cli(["anonymize", "--detector", "structured", "--policy", "EMAIL"], stdin="x",
                        monkeypatch=monkeypatch, capsys=capsys)
    assert code == 2 and "TYPE=METHOD" in err
    code, _, err = _cli(["anonymize", "--input", "src/cloud_edge_privacy/sample_data/echr_sample.json"],
                        capsys=capsys)
    assert code == 2 and "--masks-out" in err


def test_cli_help_version_and_choices(capsys):
    from cloud_edge_privacy import __version__
    from cloud_edge_privacy.cli import build_parser
    from cloud_edge_privacy.desensitization import list_operators
    from cloud_edge_privacy.detection import DETECTORS

    parser = build_parser()
    with pytest.raises(SystemExit) as ex:
        parser.parse_args(["--version"])
    assert ex.value.code == 0 and capsys.readouterr().out.strip() == f"cloud-edge-privacy {__version__}"
    top = parser.format_help()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert len(sub.choices) >= 11
    for name in sub.choices:
        assert f"\n    {name}" in top, name
    anon = sub.choices["anonymize"]
    method = next(a for a in anon._actions if a.dest == "method")
    detector = next(a for a in anon._actions if a.dest == "detector")
    assert set(method.choices) == {"none", *list_operators()}
    assert set(detector.choices) == set(DETECTORS)
    assert "(default: pseudonym)" in anon.format_help()
