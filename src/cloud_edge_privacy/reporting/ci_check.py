"""Check a finished job's metrics against committed expected values (the KubeEdge CI job).

The expected file (JSON) holds one rule per metric and the values per test case (labelled by what differs,
as in the report)::

    {"rules": {"sels": {"check": "exact"},
               "llm_judge": {"check": "abs", "tol": 1.5, "why": "LLM judge: ..."},
               "latency_mean_ms": {"check": "skip", "why": "wall clock"}},
     "cases": {"none": {"sels": 1.0, "llm_judge": 6.5, ...}, ...}}

``exact``: the value must be equal (deterministic metrics: detection, desensitization, leakage, routing by
length, counts); ``abs``/``rel``: within an absolute/relative tolerance (metrics that depend on LLM output);
``skip``: not compared, with the reason (wall-clock metrics).  A metric without a rule is compared exactly.
A regression is a value outside its rule, a missing value, or a test case that is missing or new.
Regenerate after an intended change: ``python -m cloud_edge_privacy.reporting.ci_check --write <job dir> <expected.json>``.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import os
import sys
from typing import Any, Dict, List, Optional, Tuple

from ..errors import ConfigError


def default_expected(config_path: str) -> str:
    """``<config without .yaml>_expected.json`` next to the job's YAML."""
    return os.path.splitext(config_path)[0] + "_expected.json"


def _value(x: Any) -> Optional[float]:
    if x is None or x == "":
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def job_values(output_dir: str) -> Dict[str, Dict[str, Optional[float]]]:
    """``{test case label: {metric: value}}`` from the job's all_rank.csv (None for an empty cell)."""
    from .report import metric_columns
    from .report_plots import case_labels

    path = os.path.join(output_dir, "rank", "all_rank.csv")
    if not os.path.isfile(path):
        raise ConfigError(f"{output_dir}: no rank/all_rank.csv (did the job finish?)")
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    if not rows:
        return {}
    names = metric_columns(rows[0])
    return {label: {m: _value(r.get(m)) for m in names} for r, label in zip(rows, case_labels(rows))}


def _fmt(v: Optional[float]) -> str:
    return "(empty)" if v is None else f"{v:g}"


def compare(expected: Dict[str, Any], got: Dict[str, Dict[str, Optional[float]]]) -> List[Tuple[str, str, str, str, str]]:
    """Every regression as (test case, metric, expected, got, rule)."""
    rules = expected.get("rules") or {}
    bad: List[Tuple[str, str, str, str, str]] = []
    exp_cases = expected.get("cases") or {}
    for label in got:
        if label not in exp_cases:
            bad.append((label, "*", "(no such test case)", "present", "test cases must match"))
    for label, metrics in exp_cases.items():
        if label not in got:
            bad.append((label, "*", "present", "(missing)", "test cases must match"))
            continue
        for name, want in metrics.items():
            rule = rules.get(name) or {"check": "exact"}
            kind = rule.get("check", "exact")
            if kind == "skip":
                continue
            have = got[label].get(name) if name in got[label] else None
            if name not in got[label]:
                bad.append((label, name, _fmt(want), "(no such column)", kind))
                continue
            if want is None or have is None:
                if want is not have:
                    bad.append((label, name, _fmt(want), _fmt(have), kind))
                continue
            tol = float(rule.get("tol", 0.0))
            if kind == "exact":
                ok = have == want
                desc = "exact"
            elif kind == "abs":
                ok = abs(have - want) <= tol
                desc = f"|diff| <= {tol:g}"
            elif kind == "rel":
                ok = abs(have - want) <= tol * max(abs(want), 1e-12)
                desc = f"|diff| <= {tol:g} x expected"
            else:
                raise ConfigError(f"unknown check {kind!r} for metric {name!r} (exact, abs, rel or skip)")
            if not ok:
                bad.append((label, name, _fmt(want), _fmt(have), desc))
    return bad


def check_job(output_dir: str, expected_path: str) -> Tuple[bool, str]:
    """Compare the job in ``output_dir`` with ``expected_path``; returns (passed, a readable report)."""
    if not os.path.isfile(expected_path):
        raise ConfigError(f"{expected_path}: expected values not found (write them with "
                          f"`python -m cloud_edge_privacy.reporting.ci_check --write {output_dir} {expected_path}`)")
    with open(expected_path, encoding="utf-8") as fh:
        expected = json.load(fh)
    got = job_values(output_dir)
    bad = compare(expected, got)
    rules = expected.get("rules") or {}
    n_checked = sum(1 for m in (expected.get("cases") or {}).values() for k in m
                    if (rules.get(k) or {}).get("check", "exact") != "skip")
    skipped = sorted(k for k, r in rules.items() if r.get("check") == "skip")
    if not bad:
        return True, (f"CI check passed: {n_checked} values in {len(got)} test case(s) match {expected_path}"
                      + (f" (not compared: {', '.join(skipped)})" if skipped else ""))
    from .leaderboard import text_table

    table = text_table([list(b) for b in bad], ["test case", "metric", "expected", "got", "rule"])
    return False, (f"CI check FAILED: {len(bad)} of {n_checked} values differ from {expected_path}\n{table}\n"
                   "If the change is intended, regenerate the expected values: python -m cloud_edge_privacy.reporting.ci_check "
                   f"--write {output_dir} {expected_path}")


def write_expected(output_dir: str, expected_path: str) -> str:
    """Write the job's current values as the expected ones, keeping the rules already in the file."""
    rules: Dict[str, Any] = {}
    if os.path.isfile(expected_path):
        with open(expected_path, encoding="utf-8") as fh:
            rules = (json.load(fh) or {}).get("rules") or {}
    doc = {"rules": rules, "cases": job_values(output_dir)}
    with open(expected_path, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1, ensure_ascii=False)
        fh.write("\n")
    return expected_path


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m cloud_edge_privacy.reporting.ci_check", description=__doc__.split("\n")[0])
    p.add_argument("job_dir", help="<workspace>/<job name> of a finished run")
    p.add_argument("expected", help="the expected-values JSON")
    p.add_argument("--write", action="store_true", help="write the job's values as the expected ones (keeps rules)")
    a = p.parse_args(argv)
    try:
        if a.write:
            print(f"wrote {write_expected(a.job_dir, a.expected)}")
            return 0
        ok, text = check_job(a.job_dir, a.expected)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
