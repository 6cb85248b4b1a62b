"""The audit log shared by several worker processes (``proxy --processes N``): rotation and appends are one step
across processes, so no line is torn or lost to a double rotation."""
import json
import multiprocessing

from cloud_edge_privacy.audit import AuditLog

LINES = 300


def _writer(path, max_bytes, who):
    log = AuditLog(path, record_content=False, max_bytes=max_bytes)
    for i in range(LINES):
        log.write({"event": "http_attempt", "who": who, "i": i, "pad": "x" * 40})


def test_two_processes_rotate_once_and_keep_every_line(tmp_path):
    path = tmp_path / "proxy_audit.jsonl"
    line = len(json.dumps({"event": "http_attempt", "who": 0, "i": 100, "pad": "x" * 40, "time": 1e9})) + 1
    max_bytes = int(line * 2 * LINES * 0.6)  # all lines fit in two files: exactly one rotation
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, max_bytes, w)) for w in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    rotated = path.with_name(path.name + ".1")
    lines = rotated.read_text().splitlines() + path.read_text().splitlines()
    rows = [json.loads(l) for l in lines]                      # none torn
    assert sorted((r["who"], r["i"]) for r in rows) == [(w, i) for w in range(2) for i in range(LINES)]
    assert rotated.stat().st_size <= max_bytes and path.stat().st_size <= max_bytes


def test_a_single_writer_rotates_past_the_limit(tmp_path):
    path = tmp_path / "a.jsonl"
    log = AuditLog(path, max_bytes=200)
    for i in range(10):
        log.write({"i": i, "pad": "y" * 30})
    rotated = path.with_name(path.name + ".1")
    assert rotated.exists() and path.stat().st_size <= 200
    last = [json.loads(l)["i"] for l in path.read_text().splitlines()]
    assert last[-1] == 9 and last == sorted(last)
