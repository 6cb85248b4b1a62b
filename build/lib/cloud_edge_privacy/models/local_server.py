"""The offline cloud: a real llama.cpp OpenAI-compatible server on 127.0.0.1, on a free port."""
from __future__ import annotations

import atexit
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Dict, Optional

from ..errors import CloudCallError
from .catalog import cache_dir, model_path

_SERVERS: Dict[tuple, "LocalServer"] = {}
_LOCK = threading.Lock()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalServer:
    """``python -m llama_cpp.server`` as a child process; stopped at exit or by :meth:`stop`."""

    def __init__(self, model: str = "qwen2.5-coder-0.5b-instruct", n_ctx: int = 4096,
                 n_threads: Optional[int] = None, port: Optional[int] = None) -> None:
        self.model = model
        self.path = str(model_path(model))
        self.n_ctx = n_ctx
        self.n_threads = n_threads or os.cpu_count() or 2
        self.port = port or free_port()
        self.proc: Optional[subprocess.Popen] = None
        self.log_path = cache_dir() / f"llama_server_{self.port}.log"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, timeout_s: float = 180.0) -> "LocalServer":
        cmd = [sys.executable, "-m", "llama_cpp.server", "--model", self.path, "--model_alias", self.model,
               "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(self.n_ctx),
               "--n_threads", str(self.n_threads), "--seed", "42"]
        log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        atexit.register(self.stop)
        deadline = time.time() + timeout_s
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise CloudCallError(f"local llama.cpp server exited with code {self.proc.returncode}; "
                                     f"see {self.log_path}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                time.sleep(0.5)
        self.stop()
        raise CloudCallError(f"local llama.cpp server did not become ready in {timeout_s:.0f}s; see {self.log_path}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.proc = None


def shared_local_server(model: str, n_ctx: int = 4096) -> LocalServer:
    """One local server per (model, context) per process, started on first use."""
    key = (model, n_ctx)
    with _LOCK:
        srv = _SERVERS.get(key)
        if srv is None or srv.proc is None or srv.proc.poll() is not None:
            srv = LocalServer(model, n_ctx).start()
            _SERVERS[key] = srv
        return srv


def stop_all() -> None:
    with _LOCK:
        for srv in _SERVERS.values():
            srv.stop()
        _SERVERS.clear()


def server_log_dir() -> Path:
    return cache_dir()
