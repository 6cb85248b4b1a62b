import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "TAB" / "cloud_edge_collaborative_inference_bench"
SHARED_TAB = REPO.parent / "shared" / "data" / "tab"


@pytest.fixture
def in_repo(monkeypatch):
    """Run from the repository root, as Ianvs users do (paths in YAML resolve against the CWD)."""
    monkeypatch.chdir(REPO)
    return REPO


@pytest.fixture
def sample_docs():
    from cloud_edge_privacy.tab_data import load_tab, sample_tab_path

    return load_tab(sample_tab_path())


@pytest.fixture
def write_json(tmp_path):
    def _write(obj, name="tab.json"):
        p = tmp_path / name
        p.write_text(obj if isinstance(obj, str) else json.dumps(obj), encoding="utf-8")
        return p

    return _write


@pytest.fixture(autouse=True)
def fresh_decision_store():
    """Routing decisions are process-wide; no test may see another's."""
    from cloud_edge_privacy import decision_store

    decision_store.clear()
    yield
    decision_store.clear()
