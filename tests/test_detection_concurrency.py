"""A recognizer declared concurrent runs on a worker thread beside the others, with the same spans as in turn."""
from __future__ import annotations

import json
import os
import re
import select
import signal
import threading
from pathlib import Path
from typing import List, Sequence

from cloud_edge_privacy.detection import build_detector
from cloud_edge_privacy.detection.gating import SentenceGate
from cloud_edge_privacy.detection.pipeline import Detector
from cloud_edge_privacy.detection.recognizer import Declared, Reads, declare
from cloud_edge_privacy.spans import Span

REPO = Path(__file__).resolve().parents[1]
_CAPITALISED = re.compile(r"\b[A-Z][a-z]+\b")


class _Capitalised:
    """A stand-in model: every capitalised word is a person; records the threads and the texts it read."""

    def __init__(self) -> None:
        self.threads: List[str] = []
        self.read: List[str] = []

    def analyze_many(self, texts: Sequence[str]) -> List[List[Span]]:
        self.threads.append(threading.current_thread().name)
        self.read += list(texts)
        return [[Span(m.start(), m.end(), "PERSON", 0.9, "fake:PERSON") for m in _CAPITALISED.finditer(t)]
                for t in texts]


class _Covers:
    """A recognizer before it that finds every 'Anna' (so the gate skips the sentences it covers)."""

    spec = declare("covers", {"PERSON"}, {"covers": 2})

    def analyze(self, text: str) -> List[Span]:
        return [Span(m.start(), m.end(), "PERSON", 1.0, "covers") for m in re.finditer("Anna", text)]


def _detectors(gate: bool):
    def model(concurrent: bool):
        inner = _Capitalised()
        rec = Declared(inner, declare("fake", {"PERSON"}, {"fake": 1}, Reads.TOKENS, concurrent=concurrent))
        return inner, (SentenceGate(rec, long_text=60) if gate else rec)

    fast_inner, fast = model(True)
    slow_inner, slow = model(False)
    return (fast_inner, Detector([_Covers(), fast], propagate=False)), \
        (slow_inner, Detector([_Covers(), slow], propagate=False))


TEXTS = ["Anna met Boris in Oslo.",
         "A long one. Anna wrote here. Then Clara came by. Nothing new. Anna again, alone. Dmitri left early.",
         "short and lower case"]


def test_a_concurrent_recognizer_runs_on_a_worker_thread_with_the_spans_it_has_in_turn():
    (fast_inner, fast), (slow_inner, slow) = _detectors(gate=False)
    assert fast.candidates_many(TEXTS) == slow.candidates_many(TEXTS)
    # the worker starts at once; what it has not started when the spans are needed, this thread reads
    here = threading.current_thread().name
    assert fast_inner.threads and all(t.startswith("detector") or t == here for t in fast_inner.threads)
    assert slow_inner.threads == [here]


def test_a_gate_reads_ahead_and_keeps_what_the_spans_found_before_it_leave_to_read():
    (fast_inner, fast), (slow_inner, slow) = _detectors(gate=True)
    got, want = fast.candidates_many(TEXTS), slow.candidates_many(TEXTS)
    assert got == want
    long_text = TEXTS[1]
    # in turn the gate skipped the sentences whose only capitalised word 'Anna' was covered; ahead it read them,
    # and their spans ("Anna") were not kept from the worker's reading
    assert " Anna wrote here." not in slow_inner.read and " Anna wrote here." in fast_inner.read
    assert [long_text[s.start:s.end] for s in got[1] if s.source == "fake:PERSON"] == ["Then", "Clara", "Dmitri"]
    here = threading.current_thread().name
    assert all(t.startswith("detector") or t == here for t in fast_inner.threads)


def test_a_failing_concurrent_recognizer_fails_the_call():
    class Broken(_Capitalised):
        def analyze_many(self, texts: Sequence[str]) -> List[List[Span]]:
            raise RuntimeError("model crashed")

    det = Detector([_Covers(), Declared(Broken(), declare("fake", {"PERSON"}, {"fake": 1}, Reads.TOKENS,
                                                          concurrent=True))])
    try:
        det.analyze("Anna met Boris.")
    except RuntimeError as err:
        assert "model crashed" in str(err)
    else:
        raise AssertionError("the worker's error was swallowed")


def test_the_default_preset_gives_the_same_spans_with_and_without_its_worker_thread():
    """The encoder NER (declared concurrent) read beside the spaCy models: prompts whole, a court judgment by
    sentence (read ahead), in one batch and one by one."""
    docs = json.loads((REPO / "data/tab/echr_dev.json").read_text(encoding="utf-8"))
    texts = ["Hi, I'm Priya Raman from Pune; my manager Tom Becker at Nordvik GmbH wants the Q3 report by Friday.",
             "patient jan kowalski, 64, seen at st. mary's in leeds on 3 may", docs[0]["text"][:9000]]
    conc = build_detector("default")
    turn = build_detector("default")
    turn.concurrent = False
    assert conc.analyze_many(texts) == turn.analyze_many(texts)
    assert [conc.analyze(t) for t in texts] == [turn.analyze(t) for t in texts]
    assert conc._workers is not None and turn._workers is None


def test_a_forked_child_gets_worker_threads_of_its_own():
    """A server that forks after warming the detector up (gunicorn --preload) must not hang in the child."""
    (inner, det), _ = _detectors(gate=False)
    want = det.candidates_many(TEXTS)  # the parent's worker thread now exists
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: answer through the pipe, never return into pytest
        try:
            os.write(write, repr(det.candidates_many(TEXTS) == want).encode())
        finally:
            os._exit(0)
    os.close(write)
    ready, _, _ = select.select([read], [], [], 60)
    answer = os.read(read, 100) if ready else b"hung"
    os.close(read)
    if not ready:
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    assert answer == b"True"


def test_shared_jobs_run_from_both_ends_and_return_in_order():
    """The worker takes jobs from the front; once their results are needed, this thread takes the rest from the
    back (here the worker is held in its first job until this thread has taken the others)."""
    from concurrent.futures import ThreadPoolExecutor

    from cloud_edge_privacy.detection.shared_jobs import SharedJobs

    started, release = threading.Event(), threading.Event()
    ran: List[tuple] = []

    def job(i: int):
        def run():
            if i == 0:
                started.set()
                assert release.wait(30)
            ran.append((i, threading.current_thread().name))
            if i == 1:
                release.set()  # this thread has taken the others (from the back): let the worker finish job 0
            return i * 10
        return run

    with ThreadPoolExecutor(thread_name_prefix="worker") as pool:
        jobs = SharedJobs([job(i) for i in range(5)], pool)
        assert started.wait(30)
        assert jobs.results() == [0, 10, 20, 30, 40]
    here = threading.current_thread().name
    assert [i for i, t in ran if t == here] == [4, 3, 2, 1]
    assert [(i, t.startswith("worker")) for i, t in ran if t != here] == [(0, True)]


def test_shared_jobs_raise_the_first_error_of_either_thread():
    from concurrent.futures import ThreadPoolExecutor

    import pytest

    from cloud_edge_privacy.detection.shared_jobs import SharedJobs

    def fail():
        raise RuntimeError("model crashed")

    with ThreadPoolExecutor() as pool:
        for jobs in ([fail], [lambda: 1, lambda: 2, fail], [fail, lambda: 1]):
            with pytest.raises(RuntimeError, match="model crashed"):
                SharedJobs(jobs, pool).results()
        assert SharedJobs([], pool).results() == []
