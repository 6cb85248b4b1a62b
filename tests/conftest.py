import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "TAB" / "cloud_edge_collaborative_inference_bench"
TAB_DIR = REPO / "data" / "tab"  # the TAB subset shipped in the repository (data/README.md)
SHARED_TAB = TAB_DIR  # the name older tests use


@pytest.fixture
def in_repo(monkeypatch):
    """Run from the repository root, as Ianvs users do (paths in YAML resolve against the CWD)."""
    monkeypatch.chdir(REPO)
    return REPO


@pytest.fixture
def sample_docs():
    from cloud_edge_privacy.datasets.tab import load_tab, sample_tab_path

    return load_tab(sample_tab_path())


@pytest.fixture
def write_json(tmp_path):
    def _write(obj, name="tab.json"):
        p = tmp_path / name
        p.write_text(obj if isinstance(obj, str) else json.dumps(obj), encoding="utf-8")
        return p

    return _write


@pytest.fixture(autouse=True)
def own_run_context(monkeypatch, tmp_path):
    """Each test gets its own output folder, hence its own run context (decisions, audit log)."""
    monkeypatch.setenv("RESULT_SAVED_URL", str(tmp_path / "out"))
    yield
    from cloud_edge_privacy.core.context import CONTEXTS

    CONTEXTS.drop(str(tmp_path / "out"))


@pytest.fixture
def fake_cloud(monkeypatch, tmp_path):
    """A logging fake OpenAI server on 127.0.0.1, configured as the cloud endpoint (mode via .mode)."""
    import sys

    sys.path.insert(0, str(REPO / "tests"))
    from fakes.fake_openai import FakeOpenAI

    with FakeOpenAI() as fake:
        monkeypatch.setenv("CEP_CLOUD_BASE_URL", fake.base_url)
        monkeypatch.setenv("CEP_CLOUD_MODEL", "fake")
        monkeypatch.setenv("CEP_CLOUD_API_KEY", "k-test")
        yield fake
