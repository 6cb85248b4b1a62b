"""Acceptance test of issue 9: the review's leak document, with an instruction naming a person, run through
`cloud-edge-privacy run` for all 8 privacy methods against a logging fake cloud on 127.0.0.1: no planted
string may arrive (each sample is either protected or blocked by the egress guard)."""
import subprocess
import sys

from conftest import REPO


def test_no_planted_identifier_reaches_the_cloud_under_any_method(tmp_path):
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "leak_check.py")], cwd=REPO,
                          capture_output=True, text=True, timeout=1800)
    out = proc.stdout
    assert "planted strings received by the fake cloud (all methods): 0 []" in out, out + proc.stderr[-3000:]
    rows = [l for l in out.splitlines() if l.startswith("| ") and not l.startswith("| method")]
    assert len(rows) == 8, out                         # one sample per method, each reported
    # not vacuous: the methods really send (protected) text; blocking everything would also leak nothing
    assert sum("| ok |" in r for r in rows) >= 6, out
    assert proc.returncode == 0, out
