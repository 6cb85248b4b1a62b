"""The offline cloud: a real llama.cpp OpenAI-compatible server on 127.0.0.1, on a free port.

The server is llama-cpp-python's own (``llama_cpp.server``), started through :func:`main` of this module so
that answers depend only on the prompt, the model and the seed: one slot (the server serialises requests), a
fixed seed, no prompt cache, and every request evaluates its whole prompt (llama-cpp-python would otherwise
reuse the KV cache of the longest common prefix with the previous request, which changes the float path and,
now and then, a greedy answer: the same prompt would answer differently depending on what came before it).
"""
from __future__ import annotations

import argparse
import atexit
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from typing import Any, AsyncIterator, Dict, List, Optional

from ..errors import CloudCallError
from . import usable_cpus
from .catalog import cache_dir, model_path

SERVER_SEED = 42
_SERVERS: Dict[tuple, "LocalServer"] = {}
_LOCK = threading.Lock()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalServer:
    """``python -m llama_cpp.server`` as a child process; stopped at exit or by :meth:`stop`.  Its log
    (``llama_server_<port>.log`` in the cache) is removed when it stops cleanly and kept when it failed to start,
    for the error message that names it."""

    def __init__(self, model: str = "qwen2.5-coder-0.5b-instruct", n_ctx: int = 4096,
                 n_threads: Optional[int] = None, port: Optional[int] = None) -> None:
        self.model = model
        self.path = str(model_path(model))
        self.n_ctx = n_ctx
        self.n_threads = n_threads or usable_cpus()
        self.port = port or free_port()
        self.proc: Optional[subprocess.Popen] = None
        self.log_path = cache_dir() / f"llama_server_{self.port}.log"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, timeout_s: float = 180.0) -> "LocalServer":
        cmd = [sys.executable, "-m", "cloud_edge_privacy.models.local_server", "--model", self.path,
               "--model-alias", self.model, "--port", str(self.port), "--n-ctx", str(self.n_ctx),
               "--n-threads", str(self.n_threads), "--seed", str(SERVER_SEED)]
        with open(self.log_path, "wb") as log:  # the child keeps its own descriptor
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        atexit.register(self.stop)
        deadline = time.time() + timeout_s
        while time.time() < deadline:
            code = self.proc.poll()
            if code is not None:
                self.proc = None  # its log is kept: it says why
                raise CloudCallError(f"local llama.cpp server exited with code {code}; see {self.log_path}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                time.sleep(0.5)
        self.stop(keep_log=True)
        raise CloudCallError(f"local llama.cpp server did not become ready in {timeout_s:.0f}s; see {self.log_path}")

    def stop(self, keep_log: bool = False) -> None:
        """Stop the server (if it runs) and remove its log, unless ``keep_log`` or it had failed on its own."""
        if self.proc is None:
            return
        code = self.proc.poll()
        if code is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        if not keep_log and code in (None, 0):
            self.log_path.unlink(missing_ok=True)


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


def build_app(model: str, alias: str, port: int, n_ctx: int, n_threads: int, seed: int) -> Any:
    """llama-cpp-python's FastAPI app with one model, no prompt cache, and a fresh prompt evaluation per request."""
    from llama_cpp.server import app as server_app
    from llama_cpp.server.settings import ModelSettings, ServerSettings

    app = server_app.create_app(
        server_settings=ServerSettings(host="127.0.0.1", port=port),
        model_settings=[ModelSettings(model=model, model_alias=alias, n_ctx=n_ctx, n_threads=n_threads,
                                      n_threads_batch=n_threads, seed=seed, cache=False, verbose=False)])

    original = server_app.get_llama_proxy

    async def fresh_prompt_proxy() -> AsyncIterator[Any]:
        # the server's own lock (one request at a time), then forget the previous request's tokens so that
        # llama-cpp-python evaluates the whole prompt again
        gen = original()
        proxy = await gen.__anext__()
        try:
            proxy().reset()
            yield proxy
        finally:
            await gen.aclose()

    # the chat/completion routes look the function up in the module at call time; the others use Depends
    server_app.get_llama_proxy = fresh_prompt_proxy
    app.dependency_overrides[original] = fresh_prompt_proxy
    return app


def main(argv: Optional[List[str]] = None) -> None:
    """``python -m cloud_edge_privacy.models.local_server --model FILE.gguf --port N``: serve on 127.0.0.1."""
    import uvicorn

    p = argparse.ArgumentParser(description="deterministic llama.cpp OpenAI-compatible server on 127.0.0.1")
    p.add_argument("--model", required=True, help="GGUF file")
    p.add_argument("--model-alias", default=None)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--n-ctx", type=int, default=4096)
    p.add_argument("--n-threads", type=int, default=usable_cpus())
    p.add_argument("--seed", type=int, default=SERVER_SEED)
    a = p.parse_args(argv)
    app = build_app(a.model, a.model_alias or a.model, a.port, a.n_ctx, a.n_threads, a.seed)
    uvicorn.run(app, host="127.0.0.1", port=a.port, log_level="warning")


if __name__ == "__main__":
    main()
