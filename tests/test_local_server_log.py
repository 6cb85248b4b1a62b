"""The local llama.cpp server's log: removed when the server stops cleanly, kept when it failed on its own (the
error message names it).  A stand-in child process, not the server: this is the bookkeeping alone."""
import subprocess
import sys

import pytest

from cloud_edge_privacy.models.local_server import LocalServer


@pytest.fixture
def server(tmp_path, monkeypatch):
    monkeypatch.setenv("CEP_CACHE_DIR", str(tmp_path))
    srv = LocalServer(model=sys.executable, port=1)  # any existing file passes as a model path; nothing starts
    srv.log_path.write_text("server output\n")
    return srv


def test_a_running_server_is_stopped_and_its_log_removed(server):
    server.proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    proc = server.proc
    server.stop()
    assert proc.poll() is not None and server.proc is None
    assert not server.log_path.exists()


def test_the_log_of_a_server_that_failed_on_its_own_is_kept(server):
    server.proc = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    server.proc.wait()
    server.stop()
    assert server.log_path.read_text() == "server output\n"


def test_keep_log_keeps_it(server):
    server.proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    server.stop(keep_log=True)
    assert server.log_path.exists()


def test_a_start_that_fails_keeps_the_log_it_names(tmp_path, monkeypatch):
    monkeypatch.setenv("CEP_CACHE_DIR", str(tmp_path))
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"not a gguf file")
    srv = LocalServer(model=str(bad))
    with pytest.raises(Exception, match=r"llama_server_\d+\.log"):
        srv.start(timeout_s=60)
    assert srv.log_path.exists() and srv.log_path.stat().st_size > 0
