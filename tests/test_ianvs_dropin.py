"""The TAB example as it is proposed upstream: ``scripts/export_ianvs_example.sh`` writes one folder that, copied
into a kubeedge/ianvs tree, installs with its own requirements.txt from the Ianvs root, runs under real Ianvs
with its own data and writes its full report there.

What CI can run (a clean clone + PyPI): the export (the wheel inside ``wheels/``, the TRIR background knowledge
in ``data/``), every path the YAMLs name is inside the example, module files import only the library, Sedna and
the standard library, every file the exported README mentions exists (in the export, in the wheel or in the
Ianvs tree), requirements.txt pins what the library pins and resolves the library from ``wheels/`` from another
working directory, and the example's Python passes pylint with Ianvs's settings.

The full drop-in needs an Ianvs checkout, which is not on PyPI and cannot be fetched in CI (only package
registries are reachable there): set ``IANVS_DIR`` to a kubeedge/ianvs checkout (commit 1d3da5b was used) to
run it. It copies the tree, exports the example into it, follows the exported README's Installation and Run
steps in a fresh venv from the Ianvs root with an empty model cache, and checks the leaderboard and the report
(tens of minutes on 2 cores).
"""
import ast
import csv
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
import yaml

from conftest import EXAMPLE, REPO

REL = "examples/TAB/cloud_edge_collaborative_inference_bench"
STDLIB = set(sys.stdlib_module_names)
# Ianvs's own files the README's steps use (they are in every kubeedge/ianvs checkout)
IANVS_FILES = {"examples/resources/third_party/sedna-0.6.0.1-py3-none-any.whl", "requirements.txt", "setup.py"}
# what a run writes (named by the README as outputs, so they cannot exist before the run)
OUTPUTS = {"predictions.jsonl", "test_case.json", "cloud_audit.jsonl", "workspace/tab_privacy_default/report.md",
           "workspace/tab_privacy_default/rank/all_rank.csv", "rank/leaderboard.csv", "leaderboard.html"}
# made by the README's own steps
CREATED = {".venv-ianvs/bin/activate"}
PYLINT_MIN = 9.5
NEED_IANVS = pytest.mark.skipif(
    not os.environ.get("IANVS_DIR"),
    reason="needs a kubeedge/ianvs checkout in $IANVS_DIR (commit 1d3da5b): Ianvs is not on PyPI and CI reaches "
           "only package registries; the other tests of this file check everything that needs no Ianvs")


def _run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert proc.returncode == 0, f"{cmd}: exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def export(dest: Path) -> Path:
    """``scripts/export_ianvs_example.sh dest`` (the committed example and library at HEAD)."""
    _run(["bash", str(REPO / "scripts" / "export_ianvs_example.sh"), str(dest)], timeout=900,
         env={**os.environ, "PYTHON": sys.executable})
    return dest


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    return export(tmp_path_factory.mktemp("export") / "cloud_edge_collaborative_inference_bench")


# ------------------------------------------------------------------------------------- README file mentions
def _section_free(text: str) -> str:
    """The README without HTML comments and without "What this example replaces" (it names the upstream files
    this folder removes, which are gone on purpose)."""
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    return re.sub(r"## What this example replaces\n.*?(?=\n## )", "", text, flags=re.S)


FILE_LIKE = re.compile(r"^[\w.~-]+(/[\w.<>~-]*)*\.(py|ya?ml|jsonl?|md|csv|png|txt|whl|html|sh|gguf)$|^[\w.-]+(/[\w.-]+)+/?$")


def readme_mentions(readme: str) -> list:
    """Every file or folder the README names: backticked spans, link and image targets, and the path-like tokens
    of its code blocks (``./`` and trailing ``/`` dropped)."""
    text = _section_free(readme)
    candidates = re.findall(r"`([^`\n]+)`", text) + re.findall(r"\]\(([^)\s]+)\)", text)
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S):
        candidates += block.split()
    out = []
    for c in candidates:
        for token in c.split():
            token = token.strip(",;:()'\"").removeprefix("./")
            if "://" in token or token.startswith(("-", "$", "~")) or "<" in token or "*" in token:
                continue
            if FILE_LIKE.match(token) and token not in out:
                out.append(token)
    return out


def missing_mentions(folder: Path, readme: str, ianvs: Path = None) -> list:
    """The README's mentions that are neither in ``folder``, in the library's wheel in ``folder/wheels``, in the
    Ianvs tree (``ianvs``, or the fixed list of Ianvs files without it), made by a step, nor a run's output."""
    wheel_names = set()
    for w in folder.glob("wheels/cloud_edge_privacy-*.whl"):
        wheel_names |= set(zipfile.ZipFile(w).namelist())
    files = [p.relative_to(folder).as_posix() for p in folder.rglob("*")]

    def found(rel: str) -> bool:
        if rel in (REL, "") or rel in OUTPUTS or rel in CREATED:
            return True
        if (folder / rel).exists() or any(f == rel or f.endswith("/" + rel) for f in files):
            return True
        if any(n == rel or n.startswith(rel + "/") for n in wheel_names):
            return True
        return (ianvs / rel).exists() if ianvs else rel in IANVS_FILES

    return [m for m in readme_mentions(readme) if not found(m.rstrip("/").removeprefix(REL).lstrip("/"))]


def test_export_is_the_folder_as_proposed(exported):
    from cloud_edge_privacy import __version__

    wheels = sorted(p.name for p in (exported / "wheels").iterdir())
    assert wheels == [f"cloud_edge_privacy-{__version__}-py3-none-any.whl"], wheels
    names = zipfile.ZipFile(exported / "wheels" / wheels[0]).namelist()
    assert "cloud_edge_privacy/bench/case_record.py" in names and "cloud_edge_privacy/reporting/report.py" in names
    import json

    background = json.loads((exported / "data" / "background_knowledge.json").read_text(encoding="utf-8"))
    public = json.loads((REPO / "data" / "tab" / "background_knowledge.json").read_text(encoding="utf-8"))
    sample = json.loads((exported / "data" / "tab_sample_background.json").read_text(encoding="utf-8"))
    assert background == {**public, **sample}
    # every sample document is one of the attacker's identities, so iar_trir is not empty on the default job
    for line in (exported / "data" / "tab_sample.jsonl").read_text(encoding="utf-8").splitlines():
        assert json.loads(line)["question"]["doc_id"] in background
    # the rest is the example as committed at HEAD, file for file
    committed = subprocess.run(["git", "ls-tree", "-r", "--name-only", "HEAD", REL], cwd=REPO, capture_output=True,
                               text=True, check=True)
    for f in committed.stdout.split():
        rel = f[len(REL) + 1:]
        if rel != "wheels/.gitignore":
            head = subprocess.run(["git", "show", f"HEAD:{f}"], cwd=REPO, capture_output=True, check=True).stdout
            assert (exported / rel).read_bytes() == head, rel


def test_every_file_the_exported_readme_mentions_exists(exported):
    readme = (exported / "README.md").read_text(encoding="utf-8")
    mentions = readme_mentions(readme)
    assert len(mentions) > 20 and "requirements.txt" in mentions, mentions
    assert missing_mentions(exported, readme) == []


def test_mention_check_catches_a_missing_file(exported):
    readme = (exported / "README.md").read_text(encoding="utf-8") + "\nSee `scripts/ianvs_parity.py` and [x](../../../docs/x.md).\n"
    assert missing_mentions(exported, readme) == ["scripts/ianvs_parity.py", "../../../docs/x.md"]


def test_every_path_the_example_names_is_inside_it():
    for f in sorted(EXAMPLE.rglob("*.yaml")):
        for p in _yaml_paths(yaml.safe_load(f.read_text(encoding="utf-8"))):
            if p.startswith("./workspace"):
                continue
            assert p.startswith(f"./{REL}/"), f"{f.relative_to(REPO)}: {p} is outside the example"
            assert (REPO / p).exists(), f"{f.relative_to(REPO)}: {p} does not exist"


def _yaml_paths(node):
    if isinstance(node, dict):
        for v in node.values():
            yield from _yaml_paths(v)
    elif isinstance(node, list):
        for v in node:
            yield from _yaml_paths(v)
    elif isinstance(node, str) and node.startswith("./"):
        yield node


def test_module_files_import_only_the_library_sedna_and_stdlib():
    for f in sorted(EXAMPLE.rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
            for name in names:
                top = name.split(".")[0]
                assert top in STDLIB or top in ("cloud_edge_privacy", "sedna"), f"{f.relative_to(REPO)}: imports {name}"


def test_readme_reads_as_an_upstream_example():
    text = (EXAMPLE / "README.md").read_text(encoding="utf-8")
    for bad in (".venv/bin", "scripts/", "../shared", "src/cloud_edge_privacy", "/work/", "DESIGN.md", "../../../"):
        assert bad not in text, f"the example README refers to {bad!r} (a path of this repository, not of Ianvs)"
    for replaced in ("readme.md", "data.py", "images/"):
        assert replaced in text, f"the README does not account for the upstream {replaced}"
    for must in ("Python 3.11", "prettytable", "`scikit-learn` 1.9.1 -> **1.6.1**", "CEP_CACHE_DIR", "cache_replays",
                 "visualization_tools.py", "load"):
        assert must in text, f"the README does not say {must!r}"


def test_requirements_pin_what_the_library_pins():
    """requirements.txt installs the library from wheels/ and lists its pinned dependencies, equal to pyproject's."""
    import tomllib

    from cloud_edge_privacy import __version__

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pins = project["dependencies"] + project["optional-dependencies"]["llm"] + project["optional-dependencies"]["bench"]
    req = [ln.strip() for ln in (EXAMPLE / "requirements.txt").read_text(encoding="utf-8").splitlines()
           if ln.strip() and not ln.startswith("#")]
    assert req[:2] == ["--find-links wheels", f"cloud-edge-privacy[llm,bench]=={__version__}"]
    assert req[2:] == pins, "requirements.txt lists other pins than pyproject.toml: copy them over"
    assert all("==" in r for r in req[1:]) and not any(r.startswith("-e ") or "../" in r for r in req)


def test_requirements_resolve_the_wheel_from_another_root(exported, tmp_path):
    """From a foreign root, `pip install -r <example>/requirements.txt` takes the library from wheels/."""
    root = tmp_path / "ianvs"
    shutil.copytree(exported, root / REL)
    proc = _run([sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--ignore-installed",
                 "--report", str(tmp_path / "report.json"), "-r", f"{REL}/requirements.txt"], cwd=root, timeout=600)
    wheel = next((exported / "wheels").glob("cloud_edge_privacy-*.whl")).name
    assert wheel in (tmp_path / "report.json").read_text(), proc.stdout[-2000:]


def pylint_score(paths, cwd: Path) -> tuple:
    """pylint with Ianvs's settings: kubeedge/ianvs has no pylintrc (its CI runs plain ``pylint`` on core/, with
    ``--max-positional-arguments=10`` on Python 3.9), so pylint's defaults apply."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.run([sys.executable, "-m", "pylint", "--max-positional-arguments=10", *map(str, paths)],
                          cwd=cwd, capture_output=True, text=True, env=env)
    found = re.search(r"rated at (-?[\d.]+)/10", proc.stdout)
    assert found, proc.stdout[-2000:] + proc.stderr[-2000:]
    return float(found.group(1)), proc.stdout


@pytest.mark.parametrize("folder", [REL, "examples/PRISM/cloud_edge_prism_bench",
                                    "examples/TAB/federated_privacy_detector_bench",
                                    "examples/TimeSeries/cloud_edge_timeseries_privacy_bench", "examples/_template"])
def test_example_python_passes_pylint_with_ianvs_settings(folder):
    pytest.importorskip("pylint", reason="pylint is in the [dev] extra (pip install -e '.[dev]')")
    score, out = pylint_score([REPO / folder], REPO)
    print(f"\npylint {folder}: {score}/10")
    assert score >= PYLINT_MIN, out


# ----------------------------------------------------------------------------------------- under real Ianvs
def readme_commands(readme: str, section: str) -> list:
    """The commands of the first bash block of a README section, continuation lines joined, comments dropped."""
    body = re.search(rf"## {section}\n(.*?)(?=\n## )", readme, flags=re.S).group(1)
    block = re.search(r"```bash\n(.*?)```", body, flags=re.S).group(1).replace("\\\n", " ")
    return [ln.strip() for ln in block.splitlines() if ln.strip() and not ln.strip().startswith("#")]


@NEED_IANVS
def test_drop_in_runs_under_real_ianvs_from_the_ianvs_root(tmp_path):
    """The exported README followed from the Ianvs root in a fresh venv, with an empty model cache."""
    ianvs = Path(os.environ["IANVS_DIR"])
    root = tmp_path / "ianvs"
    # a scratch copy of the checkout's files (its git objects are not needed; never write into the checkout)
    shutil.copytree(ianvs, root, ignore=shutil.ignore_patterns(".git", "workspace", ".venv*"))
    target = export(tmp_path / "export")
    shutil.rmtree(root / REL, ignore_errors=True)
    shutil.copytree(target, root / REL)
    readme = (root / REL / "README.md").read_text(encoding="utf-8")
    assert missing_mentions(root / REL, readme, ianvs=root) == []
    # the README's optional speed-up: a llama-cpp-python wheel built once, put into wheels/
    cache = Path(os.environ.get("CEP_CACHE_DIR", Path.home() / ".cache" / "cloud-edge-privacy")) / "wheels"
    for w in cache.glob("llama-*/llama_cpp_python-*.whl"):
        shutil.copy2(w, root / REL / "wheels" / w.name)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CEP_", "VIRTUAL_ENV", "PYTHON", "RESULT_SAVED_URL", "TAB_"))}
    env["CEP_CACHE_DIR"] = str(tmp_path / "empty-cache")
    times = {}

    def shell(cmd, timeout=3600):
        t0 = time.perf_counter()
        proc = _run(["bash", "-c", f"source .venv-ianvs/bin/activate 2>/dev/null; {cmd}"], cwd=root, env=env,
                    timeout=timeout)
        times[cmd[:60]] = round(time.perf_counter() - t0)
        return proc

    for cmd in readme_commands(readme, "Installation"):
        if "download.pytorch.org" in cmd and os.environ.get("IANVS_TORCH_FROM_PYPI"):
            cmd = cmd.split(" --index-url")[0]  # a machine that reaches only PyPI (its pip finds the CPU build)
        shell(cmd.replace("python3.11 -m venv", f"{getattr(sys, '_base_executable', sys.executable)} -m venv"))
    run, report = readme_commands(readme, "Run")
    proc = shell(run)
    assert "Exception ignored" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    shell(report)
    print("\ndrop-in wall times (s):", times)
    job = yaml.safe_load((root / REL / "benchmarkingjob.yaml").read_text())["benchmarkingjob"]
    out = root / job.get("workspace", "./workspace") / job["name"]
    with open(out / "rank" / "all_rank.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert sorted(r["cloudmodel-privacy_method"] for r in rows) == ["none", "placeholder", "suppression"]
    for r in rows:
        assert int(r["n_failed"]) == 0 and r["iar_trir"] != ""
        if r["cloudmodel-privacy_method"] != "none":
            assert int(float(r["leak_direct"])) == 0
        assert (root / r["url"] / "predictions.jsonl").is_file() and (root / r["url"] / "test_case.json").is_file()
    text = (out / "report.md").read_text(encoding="utf-8")
    for section in ("## Leaderboard", "## Per-sample metrics", "## Accuracy preservation (APR)", "## Latency conditions",
                    "## Plots"):
        assert section in text, section
    assert "routes edge/collab/cloud" in text and "/0/" in text
