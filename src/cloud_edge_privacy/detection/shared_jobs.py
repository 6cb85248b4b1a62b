"""Jobs a worker thread runs from the front while the thread that needs their results runs them from the back.

A concurrent recognizer (the encoder NER: ONNX Runtime, outside the GIL) reads beside the others on a worker
thread.  On a long text it is the slowest of them, and the detector used to wait for it with a core idle; now the
waiting thread takes the jobs the worker has not started, from the other end, so both cores read.  Each job is one
piece the recognizer labels alone, so who runs it changes no span.
"""
from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable, Generic, List, Optional, Sequence, TypeVar

T = TypeVar("T")


class SharedJobs(Generic[T]):
    """``jobs`` started on ``pool``; :meth:`results` runs what is left and returns every job's result in order."""

    def __init__(self, jobs: Sequence[Callable[[], T]], pool: ThreadPoolExecutor) -> None:
        self._jobs = list(jobs)
        self._out: List[Optional[T]] = [None] * len(self._jobs)
        self._front, self._back = 0, len(self._jobs)
        self._lock = threading.Lock()
        self._started = threading.Event()
        self._worker: Future = pool.submit(self._run, True)

    def wait_started(self, timeout: float) -> None:
        """Wait (at most ``timeout`` seconds) until the worker has taken its first job, or there is none left.

        The caller's next step is usually pure Python, which holds the GIL: a worker thread waking up then waits
        for it until the interpreter's switch interval (5 ms) makes the caller let go, and only then starts its
        product.  Waiting here (the GIL released) lets it start at once: it runs the job's first Python steps and
        lets go of the GIL inside ONNX Runtime."""
        self._started.wait(timeout)

    def results(self) -> List[T]:
        """Every job's result, in the jobs' order, once all have run (here or on the worker); the first error of
        either thread is raised (the worker then starts no further job)."""
        try:
            self._run(False)
        except BaseException:
            with self._lock:
                self._back = self._front
            raise
        self._worker.result()
        return list(self._out)  # type: ignore[arg-type]

    def _run(self, front: bool) -> None:
        try:
            while (i := self._take(front)) is not None:
                if front:
                    self._started.set()
                self._out[i] = self._jobs[i]()
        finally:
            self._started.set()

    def _take(self, front: bool) -> Optional[int]:
        with self._lock:
            if self._front >= self._back:
                return None
            if front:
                self._front += 1
                return self._front - 1
            self._back -= 1
            return self._back
