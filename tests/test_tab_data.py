import copy
import json

import pytest

from cloud_edge_privacy.errors import DataValidationError
from cloud_edge_privacy.datasets.tab import (load_tab, read_ianvs_jsonl, resolve_tab_file, sample_tab_path,
                                         to_ianvs_record, write_ianvs_jsonl)
from conftest import SHARED_TAB


def _raw_sample():
    return json.loads(sample_tab_path().read_text(encoding="utf-8"))


def test_sample_loads_with_offsets_matching_text(sample_docs):
    assert len(sample_docs) == 3
    for doc in sample_docs:
        for mentions in doc.annotations.values():
            for m in mentions:
                assert doc.text[m.start_offset:m.end_offset] == m.span_text


def test_real_tab_dev_loads_unchanged():
    docs = load_tab(SHARED_TAB / "echr_dev.json")
    assert len(docs) == 21
    assert all(d.annotations for d in docs)


def test_question_never_contains_gold(sample_docs):
    rec = to_ianvs_record(sample_docs[0], "Summarize.")
    assert set(rec["question"]) == {"doc_id", "text", "instruction"}
    assert "annotations" in rec["answer"] and rec["answer"]["doc_id"] == rec["question"]["doc_id"]
    blob = json.dumps(rec["question"])
    assert "entity_mentions" not in blob and "identifier_type" not in blob


def test_jsonl_roundtrip_and_limit(sample_docs, tmp_path):
    out = tmp_path / "d.jsonl"
    assert write_ianvs_jsonl(sample_docs, out, limit=2) == 2
    recs = read_ianvs_jsonl(out)
    assert [r["question"]["doc_id"] for r in recs] == ["sample-001", "sample-002"]


@pytest.mark.parametrize("mutate, expected", [
    (lambda d: d[0].pop("text"), "document 'sample-001': missing field 'text'"),
    (lambda d: d[0].__setitem__("text", "   "), "document 'sample-001': field 'text' is empty"),
    (lambda d: d[1].pop("doc_id"), "document #1: missing or empty field 'doc_id'"),
    (lambda d: d[0]["annotations"]["annotator1"]["entity_mentions"][0].pop("entity_id"),
     "annotator 'annotator1', entity_mentions[0]: missing field 'entity_id'"),
    (lambda d: d[0]["annotations"]["annotator1"]["entity_mentions"][2].__setitem__("start_offset", 3),
     "entity_mentions[2]: span_text"),
    (lambda d: d[0]["annotations"]["annotator1"]["entity_mentions"][0].__setitem__("end_offset", 10**6),
     "outside the text"),
    (lambda d: d[0]["annotations"]["annotator1"]["entity_mentions"][0].__setitem__("identifier_type", "X"),
     "identifier_type"),
    (lambda d: d[2].__setitem__("doc_id", "sample-001"), "duplicate doc_id"),
    (lambda d: d[0]["annotations"].__setitem__("annotator2", {}), "annotator 'annotator2'"),
])
def test_bad_documents_name_file_document_and_field(write_json, mutate, expected):
    docs = copy.deepcopy(_raw_sample())
    mutate(docs)
    path = write_json(docs)
    with pytest.raises(DataValidationError) as err:
        load_tab(path)
    assert str(path) in str(err.value) and expected in str(err.value)


def test_malformed_json_names_line(write_json):
    path = write_json('[{"doc_id": "a", "text": "x",,}]')
    with pytest.raises(DataValidationError, match=r"not valid JSON.*line 1"):
        load_tab(path)


def test_not_a_list_empty_list_and_missing_file(write_json, tmp_path):
    with pytest.raises(DataValidationError, match="expected a JSON list"):
        load_tab(write_json({"doc_id": "a"}))
    with pytest.raises(DataValidationError, match="no documents"):
        load_tab(write_json([]))
    with pytest.raises(DataValidationError, match="file not found"):
        load_tab(tmp_path / "nope.json")


def test_huge_document_is_rejected_with_its_size(write_json):
    docs = _raw_sample()[:1]
    docs[0]["text"] = docs[0]["text"] + " x" * 60
    docs[0]["annotations"] = {"a": {"entity_mentions": []}}
    with pytest.raises(DataValidationError, match=r"sample-001.*above the limit of 100"):
        load_tab(write_json(docs), max_chars=100)


def test_bad_jsonl_lines(tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_text('{"question": {"text": "a"}, "answer": {}}\n{"question": 1}\n')
    with pytest.raises(DataValidationError, match="line 2: missing field 'answer'"):
        read_ianvs_jsonl(p)


def test_data_resolution_order(tmp_path, monkeypatch):
    (tmp_path / "echr_dev.json").write_text("[]")
    monkeypatch.setenv("TAB_DATA_DIR", "/does/not/exist")
    assert resolve_tab_file(str(tmp_path)) == tmp_path / "echr_dev.json"   # --data-dir wins
    with pytest.raises(DataValidationError, match="TAB_DATA_DIR=/does/not/exist"):
        resolve_tab_file(None)
    monkeypatch.delenv("TAB_DATA_DIR")
    monkeypatch.chdir(tmp_path)                                          # nothing is picked up from the CWD
    assert resolve_tab_file(None) is None


def test_prepare_tab_cli(tmp_path):
    from cloud_edge_privacy.cli import main

    assert main(["prepare-tab", "--input", str(sample_tab_path()), "--out", str(tmp_path), "--limit", "1"]) == 0
    assert len(read_ianvs_jsonl(tmp_path / "echr_sample.jsonl")) == 1


def test_cli_reports_bad_input_without_traceback(write_json, tmp_path, capsys):
    from cloud_edge_privacy.cli import main

    bad = write_json('{"oops": ')
    assert main(["prepare-tab", "--input", str(bad), "--out", str(tmp_path)]) == 2
    assert f"error: {bad}: not valid JSON" in capsys.readouterr().err
    assert not list(tmp_path.glob("*.jsonl"))


def test_shipped_data_matches_its_checksums():
    """data/ travels with the repository; SHA256SUMS pins every file (data/README.md names sources/licences)."""
    import hashlib

    from conftest import REPO

    lines = (REPO / "data" / "SHA256SUMS").read_text().split("\n")
    entries = [ln.split("  ", 1) for ln in lines if ln.strip()]
    assert len(entries) == 13
    for digest, rel in entries:
        assert hashlib.sha256((REPO / "data" / rel).read_bytes()).hexdigest() == digest, rel


def test_default_data_paths_come_from_the_repository(monkeypatch, tmp_path):
    from conftest import REPO

    from cloud_edge_privacy import datasets
    from cloud_edge_privacy.errors import DataValidationError
    from cloud_edge_privacy.metrics import trir

    for var in ("CEP_DATA_DIR", "TAB_DATA_DIR", "TAB_BACKGROUND_KNOWLEDGE"):
        monkeypatch.delenv(var, raising=False)
    assert datasets.tab_dir() == REPO / "data" / "tab"
    assert trir.background_path() == REPO / "data" / "tab" / "background_knowledge.json"
    monkeypatch.setenv("CEP_DATA_DIR", str(tmp_path))                     # elsewhere: nothing there yet
    assert datasets.tab_dir() is None and trir.background_path() is None
    with pytest.raises(DataValidationError, match="CEP_DATA_DIR"):
        datasets.require_data("tab/echr_dev.json")
