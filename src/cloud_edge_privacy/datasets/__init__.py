"""Where the public data that travels with the repository lives (``data/`` at the repository root).

One place for every default data path: the TAB subset, the TRIR background knowledge, the real user prompts and
the PRISM prompts (sources and licences in ``data/README.md``).  From a source checkout the folder is found next to
``src/``; ``$CEP_DATA_DIR`` points elsewhere (e.g. for a wheel install, which does not carry the data).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

from ..errors import DataValidationError

DATA_DIR_ENV = "CEP_DATA_DIR"


def data_root() -> Optional[Path]:
    """``$CEP_DATA_DIR``, else the repository's ``data/`` folder when running from a checkout; else None."""
    env = os.environ.get(DATA_DIR_ENV)
    if env:
        return Path(env)
    repo_data = Path(__file__).resolve().parents[3] / "data"
    return repo_data if (repo_data / "README.md").is_file() else None


def data_path(relative: str) -> Optional[Path]:
    """A file or folder under the data root (None when there is no data root or it is absent)."""
    root = data_root()
    if root is None:
        return None
    p = root / relative
    return p if p.exists() else None


def require_data(relative: str) -> Path:
    """Like :func:`data_path`, but a clear error naming what is missing and how to get it."""
    p = data_path(relative)
    if p is None:
        root = data_root()
        where = f"{root}/{relative}" if root else f"data/{relative} (no data folder: not a source checkout)"
        raise DataValidationError(f"{where} not found: run from a clone of the repository, or set "
                                  f"${DATA_DIR_ENV} to a folder laid out as the repository's data/")
    return p


def tab_dir() -> Optional[Path]:
    """The TAB subset (echr_train.json, echr_dev.json, background_knowledge.json)."""
    return data_path("tab")
