"""TAB (Text Anonymization Benchmark) loading, validation and conversion to the JSONL Ianvs reads.

The official format is a JSON list of documents ``{doc_id, text, annotations, meta, ...}`` where
``annotations`` maps each annotator to ``{"entity_mentions": [...]}``.  Conversion puts only
``{doc_id, text, instruction}`` into ``question`` (x); gold annotations travel in ``answer`` (y),
which Ianvs hands to metrics only (docs/ianvs-contract.md §6).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional

from ..errors import DataValidationError
from ..vocabulary import TAB_CATEGORIES

IDENTIFIER_TYPES = ("DIRECT", "QUASI", "NO_MASK")
ENTITY_TYPES = TAB_CATEGORIES
DEFAULT_INSTRUCTION = "Summarize the facts of this court case in three sentences."
MAX_DOC_CHARS = 200_000  # TAB's longest ECHR case is about 60k characters

_MENTION_FIELDS: Dict[str, type] = {
    "entity_type": str,
    "entity_mention_id": str,
    "start_offset": int,
    "end_offset": int,
    "span_text": str,
    "identifier_type": str,
    "entity_id": str,
}


@dataclass(frozen=True)
class Mention:
    """One gold entity mention of one annotator."""

    entity_type: str
    entity_mention_id: str
    start_offset: int
    end_offset: int
    span_text: str
    identifier_type: str
    entity_id: str
    confidential_status: str = "NOT_CONFIDENTIAL"

    @property
    def is_masked_type(self) -> bool:
        return self.identifier_type in ("DIRECT", "QUASI")

    def to_dict(self) -> Dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class TabDocument:
    doc_id: str
    text: str
    annotations: Dict[str, List[Mention]]
    meta: Dict[str, Any] = field(default_factory=dict)
    task: str = ""
    dataset_type: str = ""


def _fail(path: str, where: str, msg: str) -> DataValidationError:
    return DataValidationError(f"{path}: {where}: {msg}")


def _parse_mention(raw: Any, text: str, path: str, where: str) -> Mention:
    if not isinstance(raw, dict):
        raise _fail(path, where, f"entity mention must be an object, got {type(raw).__name__}")
    for name, typ in _MENTION_FIELDS.items():
        if name not in raw:
            raise _fail(path, where, f"missing field '{name}'")
        if not isinstance(raw[name], typ) or (typ is int and isinstance(raw[name], bool)):
            raise _fail(path, where, f"field '{name}' must be {typ.__name__}, got {raw[name]!r}")
    start, end = raw["start_offset"], raw["end_offset"]
    if not 0 <= start < end <= len(text):
        raise _fail(path, where, f"offsets [{start}, {end}) outside the text (length {len(text)})")
    if text[start:end] != raw["span_text"]:
        raise _fail(
            path, where,
            f"span_text {raw['span_text']!r} does not match text[{start}:{end}] = {text[start:end]!r}",
        )
    if raw["identifier_type"] not in IDENTIFIER_TYPES:
        raise _fail(path, where, f"field 'identifier_type' must be one of {IDENTIFIER_TYPES}, got {raw['identifier_type']!r}")
    return Mention(
        entity_type=raw["entity_type"],
        entity_mention_id=raw["entity_mention_id"],
        start_offset=start,
        end_offset=end,
        span_text=raw["span_text"],
        identifier_type=raw["identifier_type"],
        entity_id=raw["entity_id"],
        confidential_status=str(raw.get("confidential_status") or "NOT_CONFIDENTIAL"),
    )


def parse_tab_documents(raw_docs: Any, path: str = "<memory>", max_chars: int = MAX_DOC_CHARS) -> List[TabDocument]:
    """Validate the official TAB structure and return typed documents."""
    if not isinstance(raw_docs, list):
        raise _fail(path, "top level", f"expected a JSON list of documents, got {type(raw_docs).__name__}")
    if not raw_docs:
        raise _fail(path, "top level", "the file contains no documents")
    docs: List[TabDocument] = []
    seen: set[str] = set()
    for i, raw in enumerate(raw_docs):
        where = f"document #{i}"
        if not isinstance(raw, dict):
            raise _fail(path, where, f"expected an object, got {type(raw).__name__}")
        doc_id = raw.get("doc_id")
        if not isinstance(doc_id, str) or not doc_id:
            raise _fail(path, where, "missing or empty field 'doc_id'")
        where = f"document '{doc_id}'"
        if doc_id in seen:
            raise _fail(path, where, "duplicate doc_id")
        seen.add(doc_id)
        text = raw.get("text")
        if not isinstance(text, str):
            raise _fail(path, where, "missing field 'text' (must be a string)")
        if not text.strip():
            raise _fail(path, where, "field 'text' is empty")
        if len(text) > max_chars:
            raise _fail(path, where, f"field 'text' has {len(text)} characters, above the limit of {max_chars}")
        anns = raw.get("annotations")
        if not isinstance(anns, dict):
            raise _fail(path, where, "missing field 'annotations' (must be an object of annotator -> {entity_mentions})")
        parsed: Dict[str, List[Mention]] = {}
        for annotator, body in anns.items():
            if not isinstance(body, dict) or not isinstance(body.get("entity_mentions"), list):
                raise _fail(path, f"{where}, annotator '{annotator}'", "missing list field 'entity_mentions'")
            parsed[annotator] = [
                _parse_mention(m, text, path, f"{where}, annotator '{annotator}', entity_mentions[{j}]")
                for j, m in enumerate(body["entity_mentions"])
            ]
        meta = raw.get("meta") if isinstance(raw.get("meta"), dict) else {}
        docs.append(TabDocument(doc_id, text, parsed, meta, str(raw.get("task") or ""), str(raw.get("dataset_type") or "")))
    return docs


def load_tab(path: str | os.PathLike, max_chars: int = MAX_DOC_CHARS) -> List[TabDocument]:
    """Load and validate an official TAB JSON file (e.g. ``echr_dev.json``)."""
    return parse_tab_documents(read_json_file(path), str(path), max_chars)


def read_json_file(path: str | os.PathLike) -> Any:
    """Parse a JSON file; a missing file, bad JSON or bad encoding is an error naming the file and line."""
    path = str(path)
    if not os.path.isfile(path):
        raise DataValidationError(f"{path}: file not found")
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except json.JSONDecodeError as exc:
        raise DataValidationError(f"{path}: not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    except UnicodeDecodeError as exc:
        raise DataValidationError(f"{path}: not UTF-8 text: {exc}") from None


def to_ianvs_record(doc: TabDocument, instruction: str = DEFAULT_INSTRUCTION) -> Dict[str, Any]:
    """One JSONL line for Ianvs: x (question) holds no gold data; y (answer) holds what metrics need."""
    return {
        "question": {"doc_id": doc.doc_id, "text": doc.text, "instruction": instruction},
        "answer": {
            "doc_id": doc.doc_id,
            "text": doc.text,
            "annotations": {a: [m.to_dict() for m in ms] for a, ms in doc.annotations.items()},
        },
    }


def write_ianvs_jsonl(docs: Iterable[TabDocument], out_path: str | os.PathLike,
                      instruction: str = DEFAULT_INSTRUCTION, limit: Optional[int] = None) -> int:
    """Write the Ianvs JSONL atomically; returns the number of records."""
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(out.suffix + ".tmp")
    n = 0
    with open(tmp, "w", encoding="utf-8") as fh:
        for doc in docs:
            if limit is not None and n >= limit:
                break
            fh.write(json.dumps(to_ianvs_record(doc, instruction), ensure_ascii=False) + "\n")
            n += 1
    os.replace(tmp, out)
    return n


def iter_jsonl(path: str | os.PathLike) -> Iterable[tuple]:
    """Yield ``(line number, object)`` for each non-blank line; errors name the file and line."""
    path = str(path)
    if not os.path.isfile(path):
        raise DataValidationError(f"{path}: file not found")
    with open(path, encoding="utf-8", errors="strict") as fh:
        lines = _read_lines(fh, path)
        for lineno, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                yield lineno, json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataValidationError(f"{path}: line {lineno}: not valid JSON: {exc.msg}") from None


def _read_lines(fh: Any, path: str) -> List[str]:
    try:
        return fh.readlines()
    except UnicodeDecodeError as exc:
        raise DataValidationError(f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason})") from None


def read_ianvs_jsonl(path: str | os.PathLike, max_chars: int = MAX_DOC_CHARS) -> List[Dict[str, Any]]:
    """Read the Ianvs JSONL the way Ianvs does (``question``/``answer`` per line), with the same checks as
    TAB input: ``question`` is a string or an object with a non-empty string ``text`` of at most
    ``max_chars`` characters; errors name the file, line and field."""
    records = []
    for lineno, rec in iter_jsonl(path):
        for key in ("question", "answer"):
            if not isinstance(rec, dict) or key not in rec:
                raise DataValidationError(f"{path}: line {lineno}: missing field '{key}'")
        q = rec["question"]
        text = q.get("text") if isinstance(q, dict) else q
        field_name = "question.text" if isinstance(q, dict) else "question"
        if not isinstance(text, str):
            raise DataValidationError(f"{path}: line {lineno}: field '{field_name}' must be a string, "
                                      f"got {type(text).__name__}")
        if not text.strip():
            raise DataValidationError(f"{path}: line {lineno}: field '{field_name}' is empty")
        if len(text) > max_chars:
            raise DataValidationError(f"{path}: line {lineno}: field '{field_name}' has {len(text):,} characters, "
                                      f"more than the limit of {max_chars:,}")
        if isinstance(q, dict) and q.get("instruction") is not None and not isinstance(q["instruction"], str):
            raise DataValidationError(f"{path}: line {lineno}: field 'question.instruction' must be a string")
        records.append(rec)
    if not records:
        raise DataValidationError(f"{path}: no records")
    return records


def sample_tab_path() -> Path:
    """The small fictional TAB-format sample shipped with the package."""
    return Path(str(resources.files("cloud_edge_privacy").joinpath("sample_data/echr_sample.json")))


def resolve_tab_file(data_dir: Optional[str], split: str = "dev") -> Optional[Path]:
    """TAB data given explicitly: ``data_dir``, else ``$TAB_DATA_DIR``.  None: use the dataset the testenv
    YAML names, exactly as Ianvs does (no folder is picked up silently).

    ``data_dir`` may also name a JSON file directly.
    """
    if data_dir:
        origin, value = "--data-dir", data_dir
    elif os.environ.get("TAB_DATA_DIR"):
        origin, value = "TAB_DATA_DIR", os.environ["TAB_DATA_DIR"]
    else:
        return None
    p = Path(value)
    if p.is_file():
        return p
    f = p / f"echr_{split}.json"
    if not f.is_file():
        raise DataValidationError(f"{origin}={value}: no file echr_{split}.json there")
    return f
