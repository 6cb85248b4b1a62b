"""The core install: build the wheel, install it in a fresh venv WITHOUT extras, use the gateway from it.

Slow (a few minutes: pip resolves the core dependencies from the index). The figures it prints (wheel size,
install time) are reported, not asserted, except generous bounds that catch a packaging mistake (torch or
llama.cpp in the core pulls gigabytes; a model file missing from the wheel breaks the README example).
"""
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO

NOT_IN_CORE = ("torch", "llama_cpp", "flwr", "ray", "sentence_transformers", "matplotlib", "sktime", "opacus")


def _readme_python_block() -> str:
    from test_docs_commands import blocks

    runs = [b for b in blocks(REPO / "README.md") if b.lang == "python" and b.mode == "run"]
    assert runs, "README.md has no runnable python block (the library section)"
    return runs[0].body


def _run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert proc.returncode == 0, f"{cmd}: exit {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="module")
def core_venv(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    # the committed tree at HEAD (what a clone holds), without .venv, caches, outputs or work in progress
    src.mkdir()
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=REPO, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp / "dist"), str(src)], timeout=600)
    wheel = next((tmp / "dist").glob("cloud_edge_privacy-*.whl"))
    base = getattr(sys, "_base_executable", sys.executable)
    _run([base, "-m", "venv", str(tmp / "venv")], timeout=300)
    py = tmp / "venv" / "bin" / "python"
    t0 = time.perf_counter()
    _run([str(py), "-m", "pip", "install", "-q", str(wheel)], timeout=1800)
    install_s = time.perf_counter() - t0
    size_mb = wheel.stat().st_size / 2**20
    print(f"\nwheel {wheel.name}: {size_mb:.2f} MiB; core install into a fresh venv: {install_s:.0f} s")
    return {"py": py, "bin": tmp / "venv" / "bin", "tmp": tmp, "size_mb": size_mb, "wheel": wheel}


@pytest.fixture
def env(tmp_path):
    e = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "CEP_DATA_DIR"))}
    e["CEP_SECRET_KEY"] = "cd" * 32
    return e


def test_the_wheel_is_small_and_the_core_has_no_heavy_extras(core_venv):
    # the models the default reads are package files: learned NER, both TAB NERs, the encoder NER (int8 ONNX,
    # 19.2 MB, 24.2 MiB wheel in all when it joined the default)
    assert core_venv["size_mb"] < 30, f"wheel of {core_venv['size_mb']:.1f} MiB: data or models packed by mistake?"
    code = "import importlib.util as u, sys; sys.exit(','.join(m for m in %r if u.find_spec(m)) or None)" % (NOT_IN_CORE,)
    proc = subprocess.run([str(core_venv["py"]), "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, f"the core install pulled: {proc.stderr.strip()}"


def test_readme_library_example_runs_from_the_wheel(core_venv, env):
    """The README's API example, as written, in the core venv, outside the repository (no data/ beside it)."""
    _run([str(core_venv["py"]), "-c", _readme_python_block()], cwd=core_venv["tmp"], env=env, timeout=900)


def test_the_wheel_without_setup_gives_the_checkout_s_spans(core_venv, tmp_path):
    """A wheel install that never ran setup.sh (empty cache directory) detects exactly what this checkout does."""
    from test_detection_cache_independence import spans_with_cache

    names = ["default", "precision", "high_recall"]
    wheel = spans_with_cache(tmp_path / "empty-cache", names, python=core_venv["py"], cwd=core_venv["tmp"])
    assert wheel == spans_with_cache(None, names)


def test_the_wheel_ships_the_package_data_every_subpackage_reads(core_venv):
    """Data read through ``__file__`` or ``importlib.resources``: the PRISM gate's weights, the embedded TAB
    sample, the trained detectors, the word lists; a package move that forgets ``package-data`` fails here, not at
    a user's."""
    import zipfile

    names = set(zipfile.ZipFile(core_venv["wheel"]).namelist())
    for needed in ("cloud_edge_privacy/routing/routing_models/prism_gate.json",
                   "cloud_edge_privacy/sample_data/echr_sample.json",
                   "cloud_edge_privacy/detection/learned/model/meta.json",
                   "cloud_edge_privacy/detection/learned/model_multilingual/ner/model",
                   "cloud_edge_privacy/detection/learned/model_multilingual/decider.json",
                   "cloud_edge_privacy/detection/tab_ner_sm_model/tok2vec/model",
                   "cloud_edge_privacy/detection/tab_ner_sm_model/NOTICE"):
        assert needed in names, f"{needed} is not in {core_venv['wheel'].name}"
    lists = sorted((REPO / "src" / "cloud_edge_privacy" / "wordlists").glob("*.txt"))
    assert lists, "no word list in src/cloud_edge_privacy/wordlists"
    for path in lists:  # the hand-written word lists detection and desensitization read
        assert f"cloud_edge_privacy/wordlists/{path.name}" in names, f"{path.name} is not in {core_venv['wheel'].name}"
    packages = {n.rsplit("/", 1)[0] for n in names if n.endswith("/__init__.py")}
    for sub in ("core", "routing", "datasets", "bench", "reporting", "wordlists"):
        assert f"cloud_edge_privacy/{sub}" in packages, f"subpackage {sub} is missing from the wheel"


def test_core_cli_and_proxy_from_the_wheel(core_venv, env):
    cli = str(core_venv["bin"] / "cloud-edge-privacy")
    assert _run([cli, "--version"], env=env).stdout.startswith("cloud-edge-privacy ")
    out = _run([cli, "anonymize", "--method", "placeholder", "--text", "Mail jane.roe@example.org today."],
               cwd=core_venv["tmp"], env=env, timeout=900).stdout
    assert "jane.roe@example.org" not in out and "[" in out
    _run([str(core_venv["py"]), "-c", "from cloud_edge_privacy.proxy.app import create_app"], env=env)
    # a feature of an extra names the extra
    proc = subprocess.run([cli, "anonymize", "--method", "metric_dp_words", "--epsilon", "1", "--text",
                           "Mail Anna Berg today."], capture_output=True, text=True, cwd=core_venv["tmp"], env=env,
                          timeout=900)
    assert proc.returncode != 0 and "cloud-edge-privacy[bench]" in proc.stderr, proc.stderr[-2000:]
