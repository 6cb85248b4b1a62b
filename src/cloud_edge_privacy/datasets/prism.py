"""PRISM prompts (``prism_prompts.jsonl``: id, domain, prompt) converted to the JSONL Ianvs reads.

There are no gold annotations in that file, so the DIRECT identifiers the leak audit looks for
(person names introduced as names, card and account numbers) are extracted by fixed rules at
preparation time.  They travel in ``answer`` (y) only; x holds the prompt and nothing else.
"""
from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from pathlib import Path
from typing import Any, Dict, List, Optional

from ..errors import DataValidationError
from .tab import iter_jsonl

INSTRUCTION = "Answer the user's request helpfully and concisely."
_NAME = r"[A-Z][a-z]+(?: [A-Z][a-z]+)?"
_GOLD_RULES = [
    ("PERSON", re.compile(rf"\b(?:named|name is|I am|I'm|this is|Dear|Hi,?|Hello,?) ({_NAME})\b")),
    ("PERSON", re.compile(rf"^({_NAME}) here\b")),
    ("CODE", re.compile(r"\b\d{12,19}\b")),            # card numbers
    ("CODE", re.compile(r"\b(?:account|acct)\s+(?:no\.?\s*)?(\d{6,})\b", re.I)),
]
_NOT_NAMES = {"Bank", "Hospital", "Clinic", "Team", "Sir", "Madam", "There", "Support"}


def gold_direct(prompt: str) -> List[Dict[str, Any]]:
    """Rule-based DIRECT identifiers in TAB mention format (for metrics only)."""
    found: Dict[tuple, Dict[str, Any]] = {}
    for etype, rx in _GOLD_RULES:
        for m in rx.finditer(prompt):
            g = 1 if m.groups() else 0
            start, end, text = m.start(g), m.end(g), m.group(g)
            if etype == "PERSON" and (text.split()[-1] in _NOT_NAMES or text.split()[0] in _NOT_NAMES):
                continue
            found[(start, end)] = {"entity_type": etype, "entity_mention_id": f"m{start}", "start_offset": start,
                                   "end_offset": end, "span_text": text, "identifier_type": "DIRECT",
                                   "entity_id": f"e{len(found)}", "confidential_status": "NOT_CONFIDENTIAL"}
    return sorted(found.values(), key=lambda m: m["start_offset"])


def load_prism_prompts(path: str) -> List[Dict[str, str]]:
    rows = []
    for lineno, rec in iter_jsonl(path):
        for key in ("id", "prompt"):
            if not isinstance(rec, dict) or not isinstance(rec.get(key), str) or not rec[key].strip():
                raise DataValidationError(f"{path}: line {lineno}: missing or empty field '{key}'")
        rows.append(rec)
    if not rows:
        raise DataValidationError(f"{path}: no prompts")
    return rows


def write_prism_jsonl(rows: List[Dict[str, str]], out: str, per_domain: Optional[int] = None) -> int:
    """Write Ianvs JSONL; ``per_domain`` keeps the first N prompts of each domain (a stratified subset)."""
    taken: Dict[str, int] = defaultdict(int)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with open(out + ".tmp", "w", encoding="utf-8") as fh:
        for r in rows:
            dom = r.get("domain", "")
            if per_domain is not None and taken[dom] >= per_domain:
                continue
            taken[dom] += 1
            fh.write(json.dumps({
                "question": {"doc_id": r["id"], "text": r["prompt"], "instruction": INSTRUCTION},
                "answer": {"doc_id": r["id"], "text": r["prompt"], "domain": dom,
                           "annotations": {"rules": gold_direct(r["prompt"])}},
            }, ensure_ascii=False) + "\n")
            n += 1
    os.replace(out + ".tmp", out)
    return n
