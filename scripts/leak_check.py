"""Leak check: the review's leak document (plus an instruction naming a person) through every privacy method,
run by `cloud-edge-privacy run` against a logging fake OpenAI server on 127.0.0.1.

Prints, per method, how many requests reached the server, the sample's status, and which planted strings
arrived (case-insensitive, on word boundaries).  Exit code 1 if any planted string arrived.

    .venv/bin/python scripts/leak_check.py [--job tests/data/leak_job/benchmarkingjob.yaml]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from fakes.fake_openai import FakeOpenAI  # noqa: E402


def planted_found(text: str, planted: list) -> list:
    return [p for p in planted if re.search(r"(?<!\w)" + re.escape(p) + r"(?!\w)", text, re.IGNORECASE)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--job", default="tests/data/leak_job/benchmarkingjob.yaml")
    ap.add_argument("--planted", default="tests/data/leak_planted.txt")
    args = ap.parse_args()
    planted = [l.strip() for l in (REPO / args.planted).read_text().splitlines() if l.strip()]
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI(mode="echo") as fake:
        env = dict(os.environ, CEP_CLOUD_BASE_URL=fake.base_url, CEP_CLOUD_MODEL="fake", CEP_CLOUD_API_KEY="k",
                   CEP_CACHE_DIR=os.environ.get("CEP_CACHE_DIR", str(Path.home() / ".cache" / "cloud-edge-privacy")))
        ws = Path(tmp) / "ws"
        job_copy = Path(tmp) / "job.yaml"
        job_copy.write_text((REPO / args.job).read_text().replace('workspace: "./workspace"', f'workspace: "{ws}"'))
        proc = subprocess.run([sys.executable, "-m", "cloud_edge_privacy.cli", "run", "-f", str(job_copy),
                               "--no-judge", "--no-progress"], cwd=REPO, env=env, capture_output=True, text=True)
        preds = sorted(ws.glob("*/*/*/predictions.jsonl"))
        rows = []
        for p in preds:
            case = json.loads((p.parent / "test_case.json").read_text())
            method = case["hyperparameters"].get("cloudmodel-privacy_method")
            for line in p.read_text().splitlines():
                rec = json.loads(line)
                res = rec["result"] or {}
                sent = json.dumps(res.get("sent_messages") or [], ensure_ascii=False)
                rows.append((method, rec["status"], planted_found(sent, planted), res.get("reason", "")))
        received = fake.bodies_text()
        leaked = planted_found(received, planted)
    print(f"runner exit code {proc.returncode}; {len(fake.requests)} request(s) reached the fake cloud")
    print("| method | status | planted strings in what it sent | reason (blocked samples) |")
    print("|---|---|---|---|")
    for method, status, found, reason in rows:
        print(f"| {method} | {status} | {', '.join(found) or 0} | {reason[:120]} |")
    print(f"\nplanted strings received by the fake cloud (all methods): {len(leaked)} {leaked}")
    if not rows:
        print(proc.stdout[-2000:], proc.stderr[-4000:], sep="\n")
        return 2
    return 1 if leaked else 0


if __name__ == "__main__":
    sys.exit(main())
