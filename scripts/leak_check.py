"""Leak check: two leak documents through every privacy method, run by `cloud-edge-privacy run` against a
logging fake OpenAI server on 127.0.0.1.

1. the review's leak document (ALL-CAPS and lower-case names, e-mails, phones, IBANs, keys, IDs, an address),
   with an instruction naming a person (``tests/data/leak_job/leak.jsonl``);
2. issue 18's: lower-case names ("mary jones", "wang fang"), a capitalised common word used as a name ("my boss
   Rose"), "Erin & Beckey", a Chinese name in Chinese text (张伟), a lower-case company and place
   ("h&r technology", "westminster"), IPv6 addresses and lower-case IBANs (``tests/data/leak_document_unicase.txt``).

Prints, per method and document, the sample's status and which planted strings arrived (case-insensitive, on
word boundaries).  Each request the fake cloud received is attributed to the document whose recorded
``sent_messages`` it carries and is searched for that document's planted strings: a surrogate drawn for one
document may by chance equal a name planted in the other ("Rose"), which is not a leak of that name.  A request
that matches no recorded message list is searched for every planted string and counted as unrecorded egress.
Exit code 1 if any planted string reached the fake cloud or any request was not recorded before it left.

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


def _messages_key(messages: list) -> str:
    """The role/content pairs of a chat request, as a comparable string."""
    return json.dumps([(m.get("role"), m.get("content")) for m in messages], ensure_ascii=False, sort_keys=True)


def public_release_values(planted: list) -> list:
    """Planted strings found in the public lists a method may release (surrogates, PRISM's value domains)."""
    from cloud_edge_privacy.desensitization import surrogates
    from cloud_edge_privacy.desensitization.dp_mechanisms import value_domains

    values = [v for pool in (surrogates.FIRST_NAMES, surrogates.LAST_NAMES, surrogates.PLACES,
                             surrogates.ORGANISATIONS, surrogates.NATIONALITIES) for v in pool]
    values += [v for dom in value_domains().values() for v in dom]
    return [p for p in planted if planted_found("\n".join(values), [p])]


def _with_second_document(job_text: str, tmp: Path, document: Path) -> str:
    """The job text pointing at a copy of its test environment whose data also holds ``document``."""
    import yaml

    env_rel = yaml.safe_load(job_text)["benchmarkingjob"]["testenv"]
    env = yaml.safe_load((REPO / env_rel).read_text())
    data = REPO / env["testenv"]["dataset"]["test_data"]
    second = {"question": {"doc_id": "leak-2", "text": document.read_text(encoding="utf-8"),
                           "instruction": "Write a short reply to mary jones and wang fang about the refund."},
              "answer": {"doc_id": "leak-2", "annotations": {}}}
    combined = tmp / "leak_data.jsonl"
    combined.write_text(data.read_text(encoding="utf-8").rstrip("\n") + "\n" + json.dumps(second, ensure_ascii=False)
                        + "\n", encoding="utf-8")
    env["testenv"]["dataset"]["train_data"] = env["testenv"]["dataset"]["test_data"] = str(combined)
    metric = env["testenv"]["metrics"][0]
    metric["url"] = str(REPO / metric["url"])
    env_copy = tmp / "test_env.yaml"
    env_copy.write_text(yaml.safe_dump(env, allow_unicode=True))
    return job_text.replace(env_rel, str(env_copy))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--job", default="tests/data/leak_job/benchmarkingjob.yaml")
    ap.add_argument("--planted", default="tests/data/leak_planted.txt,tests/data/leak_planted_unicase.txt")
    ap.add_argument("--second", default="tests/data/leak_document_unicase.txt",
                    help="a second leak document (empty: only the job's own data)")
    args = ap.parse_args()
    per_file = [[l.strip() for l in (REPO / f).read_text(encoding="utf-8").splitlines() if l.strip()]
                for f in args.planted.split(",") if f]
    planted = [p for lst in per_file for p in lst]
    # planted file i belongs to document leak-(i+1): the job's own document, then the second one
    planted_of = {f"leak-{i + 1}": lst for i, lst in enumerate(per_file)}
    public = public_release_values(planted)
    if public:
        # a surrogate or DP release drawn from a public list may equal it by design: the check would be ambiguous
        print(f"planted strings that are also public release values (surrogate lists, PRISM value domains): "
              f"{public}; plant strings that are not", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI(mode="echo") as fake:
        env = dict(os.environ, CEP_CLOUD_BASE_URL=fake.base_url, CEP_CLOUD_MODEL="fake", CEP_CLOUD_API_KEY="k",
                   CEP_CACHE_DIR=os.environ.get("CEP_CACHE_DIR", str(Path.home() / ".cache" / "cloud-edge-privacy")))
        ws = Path(tmp) / "ws"
        job_copy = Path(tmp) / "job.yaml"
        job_text = (REPO / args.job).read_text().replace('workspace: "./workspace"', f'workspace: "{ws}"')
        if args.second:
            job_text = _with_second_document(job_text, Path(tmp), REPO / args.second)
        job_copy.write_text(job_text)
        proc = subprocess.run([sys.executable, "-m", "cloud_edge_privacy.cli", "run", "-f", str(job_copy),
                               "--no-judge", "--no-progress"], cwd=REPO, env=env, capture_output=True, text=True)
        preds = sorted(ws.glob("*/*/*/predictions.jsonl"))
        rows = []
        recorded: dict = {}          # json of a sent message list -> the doc_id that recorded it
        for p in preds:
            case = json.loads((p.parent / "test_case.json").read_text())
            method = case["hyperparameters"].get("cloudmodel-privacy_method")
            for line in p.read_text().splitlines():
                rec = json.loads(line)
                res = rec["result"] or {}
                doc_id = rec.get("doc_id") or ""
                mine = planted_of.get(doc_id, planted)
                sent = json.dumps(res.get("sent_messages") or [], ensure_ascii=False)
                if res.get("sent_messages"):
                    recorded[_messages_key(res["sent_messages"])] = doc_id
                rows.append((method, doc_id, rec["status"], planted_found(sent, mine), res.get("reason", "")))
        leaked, unrecorded = [], 0
        for req in fake.requests:
            body = req["body"]
            doc_id = recorded.get(_messages_key(body.get("messages") or []))
            unrecorded += doc_id is None
            found = planted_found(json.dumps(body, ensure_ascii=False), planted_of.get(doc_id, planted))
            leaked += [f for f in found if f not in leaked]
    print(f"runner exit code {proc.returncode}; {len(fake.requests)} request(s) reached the fake cloud")
    print("| method | sample | status | planted strings in what it sent | reason (blocked samples) |")
    print("|---|---|---|---|---|")
    for method, doc_id, status, found, reason in sorted(rows, key=lambda r: (str(r[0]), str(r[1]))):
        print(f"| {method} | {doc_id} | {status} | {', '.join(found) or 0} | {reason[:120]} |")
    print(f"\nplanted strings received by the fake cloud (all methods): {len(leaked)} {leaked}")
    print(f"requests not recorded in any sample's sent_messages: {unrecorded} of {len(fake.requests)}")
    if not rows:
        print(proc.stdout[-2000:], proc.stderr[-4000:], sep="\n")
        return 2
    return 1 if leaked or unrecorded else 0


if __name__ == "__main__":
    sys.exit(main())
