"""docs/extending.md, run for real: a new example scenario copied from examples/_template/ (renamed the way the
doc says), with the template's own privacy method (``category_tag``, one file) and the worked metric
(``answer_words``, one declaration), run by the command line in a fresh process on the real models: llama.cpp
edge model and the llama.cpp OpenAI-compatible server on 127.0.0.1 as the cloud (answers cached on disk)."""
import csv
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO

DOC = REPO / "docs" / "extending.md"
TEMPLATE = REPO / "examples" / "_template"


def _rename_scenario(root: Path, domain: str, name: str, prefix: str) -> Path:
    """What the doc's copy step does: the folder under examples/<domain>/<name>, every path and the
    template/Template names (Ianvs imports module files by bare name) renamed."""
    dest = root / "examples" / domain / name
    shutil.copytree(TEMPLATE, dest)
    for f in sorted(dest.rglob("*template*"), key=lambda p: -len(p.parts)):
        f.rename(f.with_name(f.name.replace("template", prefix)))
    for f in dest.rglob("*"):
        if f.is_file():
            text = f.read_text(encoding="utf-8")
            text = (text.replace("examples/_template", f"examples/{domain}/{name}")
                    .replace("template", prefix).replace("Template", prefix.capitalize()))
            f.write_text(text, encoding="utf-8")
    return dest


def test_the_doc_counts_the_files_each_extension_touches():
    text = DOC.read_text(encoding="utf-8")
    for section in ("Add a privacy method", "Add a metric", "Add an example scenario"):
        assert f"## {section}" in text
    assert re.search(r"Files touched: \*\*\d", text)
    for rel in re.findall(r"`(examples/_template/[^`]+)`", text):
        assert (REPO / rel).exists(), rel


@pytest.mark.llm
def test_a_scenario_copied_from_the_template_runs_with_its_method_and_metric(tmp_path, monkeypatch):
    for var in ("CEP_CLOUD_BASE_URL", "CEP_CLOUD_MODEL", "CEP_CLOUD_API_KEY", "TAB_DATA_DIR"):
        monkeypatch.delenv(var, raising=False)  # -> the local llama.cpp server is started
    (tmp_path / "examples" / "TAB").mkdir(parents=True)
    (tmp_path / "examples" / "TAB" / "cloud_edge_collaborative_inference_bench").symlink_to(
        REPO / "examples" / "TAB" / "cloud_edge_collaborative_inference_bench")  # the template's data
    dest = _rename_scenario(tmp_path, "Legal", "contract_review_bench", "contract")
    assert sorted(p.name for p in dest.rglob("*.py")) == ["contract_metrics.py", "contract_modules.py",
                                                          "contract_operator.py"]
    job = dest / "benchmarkingjob.yaml"
    proc = subprocess.run([str(REPO / ".venv" / "bin" / "cloud-edge-privacy"), "run", "-f", str(job.relative_to(tmp_path)),
                           "--no-progress", "--no-judge"], cwd=tmp_path, capture_output=True, text=True, timeout=1800,
                          env=dict(os.environ, PYTHONPATH=str(REPO / "src")))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    out = tmp_path / "workspace" / "contract_scenario"
    with open(out / "rank" / "all_rank.csv", newline="") as fh:
        rows = {r["cloudmodel-privacy_method"]: r for r in csv.DictReader(fh)}
    assert set(rows) == {"none", "category_tag"}
    tagged, raw = rows["category_tag"], rows["none"]
    assert int(tagged["n_failed"]) == 0 and int(tagged["n_completed"]) == 3
    assert int(tagged["leak_direct"]) == 0 < int(raw["leak_direct"])    # the method protects, the baseline leaks
    assert float(tagged["answer_words"]) > 0 and float(raw["answer_words"]) > 0   # the metric is computed
    # what left the edge (the audit, written before each request) carries the method's tags, not the names
    audit = [json.loads(l) for l in (out / "contract-gateway" / "cloud_audit.jsonl").read_text().splitlines()]
    tagged_sent = [a for a in audit if a.get("privacy_method") == "category_tag" and a.get("messages")]
    assert tagged_sent and all("<PERSON>" in json.dumps(a["messages"]) for a in tagged_sent)
    # the report reads the metric's declared direction (information: no arrow)
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "| answer_words | information | mean number of words" in report
