"""Result tables in the READMEs, generated from the committed results/ (so a README cannot contradict them).

A README marks each generated table::

    <!-- generated-table: tab_full_mti (scripts/readme_tables.py) -->
    | ... the table ... |
    <!-- /generated-table -->

and ``TABLES`` below says where its rows come from and which columns it shows.  Usage (repository root)::

    .venv/bin/python scripts/readme_tables.py           # rewrite every marked table in place
    .venv/bin/python scripts/readme_tables.py --check   # exit 1 and show the difference when one is stale

tests/test_readme_tables.py runs ``--check``.
"""
from __future__ import annotations

import argparse
import csv
import difflib
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parents[1]
TAB_EXAMPLE = "examples/TAB/cloud_edge_collaborative_inference_bench"
BEGIN = re.compile(r"^<!-- generated-table: (\S+) .*-->\s*$")
END = "<!-- /generated-table -->"

Row = Dict[str, str]


def value(row: Row, key: str) -> str:
    """A column of a leaderboard row, falling back to the all_rank column it carries."""
    v = row.get(key)
    if v in (None, ""):
        v = row.get(f"all_rank:{key}", "")
    return v or ""


def num(digits: int) -> Callable[[Row, str], str]:
    def fmt(row: Row, key: str) -> str:
        v = value(row, key)
        if v == "":
            return ""
        x = float(v)
        return "" if math.isnan(x) else f"{x:.{digits}f}"
    return fmt


def integer(row: Row, key: str) -> str:
    v = value(row, key)
    return "" if v == "" else str(int(round(float(v))))


def with_ci(digits: int) -> Callable[[Row, str], str]:
    def fmt(row: Row, key: str) -> str:
        v, lo, hi = value(row, key), row.get(f"{key}_ci_low", ""), row.get(f"{key}_ci_high", "")
        if v == "":
            return ""
        out = f"{float(v):.{digits}f}"
        return f"{out} [{float(lo):.{digits}f}, {float(hi):.{digits}f}]" if lo and hi else out
    return fmt


def method_label(row: Row, _key: str) -> str:
    method = row.get("method") or value(row, "cloudmodel-privacy_method")
    eps = row.get("epsilon") or value(row, "cloudmodel-epsilon")
    if eps:
        e = float(eps)
        return f"{method} ε={e:g}"
    return method


def completed_failed(row: Row, _key: str) -> str:
    return f"{integer(row, 'n_completed')} / {integer(row, 'n_failed')}"


Column = Tuple[str, str, Callable[[Row, str], str]]  # (header, key, formatter)

GRID_COLUMNS: List[Column] = [
    ("method (ε)", "", method_label), ("leak_direct", "leak_direct", integer), ("PDR", "pdr", num(3)),
    ("SELS", "sels", num(3)), ("IAR coref", "iar_coref_leak", num(3)), ("IAR re-id", "iar_reidentification", num(3)),
    ("IAR inference", "iar_inference", num(3)), ("TRIR", "iar_trir", num(3)), ("CPP", "cpp", num(3)),
    ("APR sim", "apr_similarity", num(3)), ("APR judge", "apr_judge", num(3)), ("LO %", "lo_pct", num(3)),
    ("ER_qi", "er_qi", num(3)), ("precision", "token_precision", num(3)), ("cloud tokens", "cloud_tokens", integer),
]
CLOUD_ALL_COLUMNS: List[Column] = [
    ("method", "", method_label), ("completed / failed", "", completed_failed), ("leak_direct", "leak_direct", integer),
    ("SELS [95% CI]", "sels", with_ci(3)), ("TRIR [95% CI]", "iar_trir", with_ci(3)),
    ("APR similarity [95% CI]", "apr_similarity", with_ci(3)), ("APR judge [95% CI]", "apr_judge", with_ci(3)),
]


@dataclass(frozen=True)
class TableSpec:
    source: str               # a CSV under the repository: leaderboard.csv (preferred) or all_rank.csv
    columns: Sequence[Column]


TABLES: Dict[str, TableSpec] = {
    "tab_full_mti": TableSpec(f"{TAB_EXAMPLE}/results/tab_privacy_full_mti/leaderboard.csv", GRID_COLUMNS),
    "tab_full_itm": TableSpec(f"{TAB_EXAMPLE}/results/tab_privacy_full_itm/all_rank.csv", GRID_COLUMNS),
    "tab_cloud_all": TableSpec(f"{TAB_EXAMPLE}/results/tab_privacy_cloud_all/leaderboard.csv", CLOUD_ALL_COLUMNS),
}


def render(spec: TableSpec) -> List[str]:
    path = REPO / spec.source
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    cols = [c for c in spec.columns if any(c[2](r, c[1]) != "" for r in rows)]  # columns the source has
    lines = ["| " + " | ".join(h for h, _, _ in cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        lines.append("| " + " | ".join(fmt(r, key) for _, key, fmt in cols) + " |")
    return lines


def readmes() -> List[Path]:
    return [REPO / "README.md", *sorted((REPO / "examples").glob("*/*/README.md")), *sorted((REPO / "docs").glob("*.md"))]


def regenerate(text: str, where: str) -> str:
    """The document with every marked table rendered from its source."""
    lines = text.split("\n")
    out: List[str] = []
    i = 0
    while i < len(lines):
        m = BEGIN.match(lines[i])
        out.append(lines[i])
        i += 1
        if not m:
            continue
        name = m.group(1)
        if name not in TABLES:
            raise SystemExit(f"{where}: unknown generated table {name!r} (known: {sorted(TABLES)})")
        j = i
        while j < len(lines) and lines[j].strip() != END:
            j += 1
        if j == len(lines):
            raise SystemExit(f"{where}: table {name!r} has no closing {END}")
        out += render(TABLES[name])
        out.append(END)
        i = j + 1
    return "\n".join(out)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="only compare; exit 1 when a table is stale")
    args = ap.parse_args(argv)
    stale = 0
    for path in readmes():
        text = path.read_text(encoding="utf-8")
        if "<!-- generated-table:" not in text:
            continue
        rel = str(path.relative_to(REPO))
        new = regenerate(text, rel)
        if new == text:
            continue
        if args.check:
            stale += 1
            sys.stdout.writelines(difflib.unified_diff(text.splitlines(True), new.splitlines(True),
                                                       f"{rel} (committed)", f"{rel} (from results/)", n=0))
        else:
            path.write_text(new, encoding="utf-8")
            print(f"rewrote the generated tables of {rel}")
    if stale:
        print(f"\n{stale} document(s) have tables that differ from results/: "
              f"run .venv/bin/python scripts/readme_tables.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
