"""Same spans in any cache state: every shipped preset reads only models committed with the package (or
installed as pinned packages), so an empty ``$CEP_CACHE_DIR`` (a wheel install that never ran setup.sh) gives
exactly the spans of a development checkout whose cache setup.sh filled.

Two presets read a model that is not a package file by design and are checked for a clear error instead of a
silent stand-in: ``federated`` (the model a federated training run writes) and ``default+llm`` (the edge LLM's
GGUF file, which setup.sh downloads; not loaded here: it is an LLM, not a recognizer)."""
import json
import os
import subprocess
import sys

import pytest

from conftest import REPO

TEXTS = [
    "Summarise this for JOHN SMITH and his colleague mary o'brien. Contact john.smith@acme-mail.com or "
    "+1 (415) 555-0132. He lives at 221B Baker Street, London NW1 6XE and works for Acme Logistics Ltd.",
    "The applicant, Mr Raja Arlewin, was born in 1950 and lives in Gdynia. On 3 March 2004 the Regional Court "
    "in Gdańsk convicted him; his lawyer, Ms K. Nowak, appealed to the Supreme Court.",
    "hi, i'm priya from pune, 24 yo, my manager at infosys said my APACHE II score report is late. "
    "var x = lookup(peer); // Revenue by market, Managers only",
]
NOT_PACKAGED = ("federated", "default+llm")

SCRIPT = r"""
import json, sys
from cloud_edge_privacy.detection import build_detector
texts, names = json.loads(sys.argv[1]), json.loads(sys.argv[2])
out = {}
for name in names:
    det = build_detector(name)
    out[name] = [[[s.start, s.end, s.category, s.source] for s in spans] for spans in det.analyze_many(texts)]
print("SPANS " + json.dumps(out))
"""


def spans_with_cache(cache_dir, names, python=sys.executable, cwd=REPO):
    """Spans of each preset on TEXTS in a fresh process whose cache directory is ``cache_dir`` (None: the
    normal one)."""
    env = dict(os.environ)
    if str(python) != sys.executable:  # another install (the wheel's venv): nothing from this checkout
        env = {k: v for k, v in env.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "CEP_DATA_DIR"))}
    env.pop("CEP_CACHE_DIR", None)
    if cache_dir is not None:
        env["CEP_CACHE_DIR"] = str(cache_dir)
    env["PYTHONWARNINGS"] = "error::RuntimeWarning"  # a fallback that only warns fails the run
    proc = subprocess.run([str(python), "-c", SCRIPT, json.dumps(TEXTS), json.dumps(names)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("SPANS ")][-1]
    return json.loads(line[len("SPANS "):])


def test_every_packaged_preset_gives_the_same_spans_with_an_empty_cache(tmp_path):
    from cloud_edge_privacy.detection import DETECTORS

    names = [n for n in DETECTORS if n not in NOT_PACKAGED]
    assert "default" in names and "high_recall" in names
    empty = spans_with_cache(tmp_path / "empty-cache", names)
    normal = spans_with_cache(None, names)
    differ = [n for n in names if empty[n] != normal[n]]
    assert not differ, f"spans depend on the cache for {differ}"
    assert any(empty["default"]), "the default preset found nothing: the comparison proves nothing"


def test_the_federated_preset_without_its_model_is_a_clear_error(tmp_path, monkeypatch):
    from cloud_edge_privacy.errors import ModelFileError

    monkeypatch.setenv("CEP_CACHE_DIR", str(tmp_path))
    from cloud_edge_privacy.detection import build_detector

    with pytest.raises(ModelFileError):
        build_detector("federated").analyze(TEXTS[0])
