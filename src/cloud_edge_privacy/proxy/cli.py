"""``cloud-edge-privacy proxy``: run the privacy gateway as an OpenAI-compatible server."""
from __future__ import annotations

import argparse
import contextlib
import os
import queue
import signal
import sys
import tempfile
import threading
import time
from typing import Any, Dict, Iterator, Optional

from .settings import CLIENT_KEY_ENV, UPSTREAM_KEY_ENV

LOCAL = "local"
SETTINGS_ENV = "CEP_PROXY_SETTINGS_JSON"          # the validated settings handed to worker processes
MULTIPROCESS_ENV = "PROMETHEUS_MULTIPROC_DIR"  # prometheus-client's multiprocess mode


def worker_app() -> Any:
    """The app of one worker process (``--processes N``): settings from ``$CEP_PROXY_SETTINGS_JSON``, secrets
    and the secret key from the environment, as in the parent.  While it loads its models, SIGTERM stops it at
    once: uvicorn captures the signal before it builds the app and acts on it only once the app has started, so a
    worker being stopped would first load every model; nothing is served or recorded yet."""
    from .app import create_app
    from .settings import ProxySettings, load_secrets

    with _default_sigterm():
        settings = ProxySettings.model_validate_json(os.environ[SETTINGS_ENV])
        return create_app(settings, load_secrets(settings))


@contextlib.contextmanager
def _default_sigterm() -> Iterator[None]:
    """SIGTERM's default action (end the process) inside the block, the previous handler after it."""
    if threading.current_thread() is not threading.main_thread():  # handlers belong to the main thread
        yield
        return
    previous = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _probe(out: Any) -> None:
    try:
        worker_app()
        out.put("")
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which fails closed
        out.put(f"{type(exc).__name__}: {exc}")
    finally:
        out.close()
        out.join_thread()
        os._exit(0)  # the app's threads and large-request lane end with the probe


def probe_worker(timeout_s: float = 600.0) -> str:
    """Build one worker's app in a child process exactly as a worker would ('' if it starts, else the error)."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    proc = ctx.Process(target=_probe, args=(out,), daemon=True)
    proc.start()
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            try:
                return str(out.get(timeout=1.0))
            except queue.Empty:
                if not proc.is_alive() and out.empty():
                    return f"the worker died while starting (exit code {proc.exitcode})"
        return f"the worker did not start within {timeout_s:.0f} s"
    finally:
        proc.join(5)
        if proc.is_alive():
            proc.kill()


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The proxy's options (shared by the ``proxy`` subcommand and ``python -m cloud_edge_privacy.proxy``).

    Options given on the command line override the same keys of ``--config``; the defaults shown apply when
    neither sets a key."""
    p.add_argument("--config", default=None, metavar="FILE",
                   help="YAML file with any of the settings below (keys as in docs/proxy.md, e.g. upstream, "
                        "model, method, method_params, detector, pseudonym_scope)")
    p.add_argument("--upstream", default=None,
                   help="the upstream's OpenAI base URL (e.g. https://api.example.com/v1), or 'local' / "
                        "'local:MODEL' to start the local llama.cpp server as the upstream (required here or "
                        "in --config)")
    p.add_argument("--host", default=None,
                   help=f"bind address (default 127.0.0.1; any other address requires ${CLIENT_KEY_ENV})")
    p.add_argument("--port", type=int, default=None, help="default 8088")
    p.add_argument("--method", default=None, help="privacy method (default: pseudonym)")
    p.add_argument("--detector", default=None, help="detector preset (default: default)")
    p.add_argument("--guard-detector", default=None, help="egress-guard detector preset (default: structured)")
    p.add_argument("--pseudonym-scope", default=None, choices=("key", "conversation", "request"),
                   help="key (default): a value gets the same surrogate in every request; conversation: per "
                        "conversation (X-Conversation-Id header, else derived from the first user message); "
                        "request: fresh surrogates per request")
    p.add_argument("--model", default=None, help="model name sent upstream (default: the client's)")
    p.add_argument("--workers", type=int, default=None, help="privacy worker threads, each loads a detector "
                                                              "(default 1)")
    p.add_argument("--processes", type=int, default=None,
                   help="server worker processes, each with its own detectors and privacy threads (default 1); "
                        "/metrics then sums all of them (prometheus multiprocess mode)")
    p.add_argument("--large-request-chars", type=int, default=None,
                   help="protect requests with more characters of text in a separate worker process (default 8000; "
                        "0: no large lane)")
    p.add_argument("--max-privacy-chars", type=int, default=None,
                   help="refuse (413) requests with more characters of text (default 400000)")
    p.add_argument("--privacy-time-budget", type=float, default=None,
                   help="stop a large request's protection after this many seconds and answer 422 (default 120)")
    p.add_argument("--audit-dir", default=None, help="folder of proxy_audit.jsonl (default proxy_audit)")
    p.add_argument("--audit-max-bytes", type=int, default=None,
                   help="rotate the audit log past this size (default 10000000)")
    p.add_argument("--max-body-bytes", type=int, default=None, help="default 2000000")
    p.add_argument("--timeout", type=float, default=None, help="upstream read timeout per attempt, seconds "
                                                                "(default 120)")
    p.add_argument("--max-retries", type=int, default=None,
                   help="upstream retries (connection errors, 408/429/502-504; default 2)")
    p.add_argument("--upstream-key-env", default=None,
                   help=f"NAME of the variable holding the upstream API key (default {UPSTREAM_KEY_ENV})")
    p.add_argument("--client-key-env", default=None,
                   help=f"NAME of the variable holding the key clients must send (default {CLIENT_KEY_ENV})")
    p.add_argument("--log-level", default="warning")


def add_parser(subparsers: Any) -> None:
    """Register the ``proxy`` subcommand on the main CLI's subparsers."""
    p = subparsers.add_parser("proxy", help="run the privacy gateway as an OpenAI-compatible proxy")
    add_arguments(p)
    p.set_defaults(func=run)


# command-line option -> settings key
_OPTIONS = {"upstream": "upstream", "host": "host", "port": "port", "method": "method", "detector": "detector",
            "guard_detector": "guard_detector", "pseudonym_scope": "pseudonym_scope", "model": "model",
            "workers": "workers", "processes": "processes", "large_request_chars": "large_request_chars",
            "max_privacy_chars": "max_privacy_chars", "privacy_time_budget": "privacy_time_budget_s",
            "audit_dir": "audit_dir", "audit_max_bytes": "audit_max_bytes",
            "max_body_bytes": "max_body_bytes", "timeout": "timeout_s", "max_retries": "max_retries",
            "upstream_key_env": "upstream_key_env", "client_key_env": "client_key_env"}


def settings_from_args(args: argparse.Namespace) -> Dict[str, Any]:
    """The settings values: the ``--config`` file's, overridden by every option given on the command line."""
    from ..errors import ConfigError
    from .settings import read_config_file

    values: Dict[str, Any] = read_config_file(args.config) if getattr(args, "config", None) else {}
    for opt, key in _OPTIONS.items():
        if getattr(args, opt, None) is not None:
            values[key] = getattr(args, opt)
    if not values.get("upstream") and not values.get("upstreams"):
        raise ConfigError("no upstream: give --upstream URL (or 'local') or set 'upstream' or 'upstreams' in "
                          "--config")
    return values


def run(args: argparse.Namespace) -> int:
    """Start (optionally) the local llama.cpp upstream, build the app, serve until interrupted."""
    import uvicorn

    from ..errors import BenchmarkError
    from .app import create_app
    from .settings import load_secrets, load_settings

    server: Optional[Any] = None
    try:
        values = settings_from_args(args)
        where = f"{args.config}" if getattr(args, "config", None) else "proxy settings"
        upstream = str(values.get("upstream") or "")
        if upstream == LOCAL or upstream.startswith(LOCAL + ":"):
            from ..models.local_server import LocalServer

            local_model = upstream.split(":", 1)[1] if ":" in upstream else "qwen2.5-coder-0.5b-instruct"
            server = LocalServer(local_model).start()
            values["upstream"], values["model"] = server.base_url, values.get("model") or local_model
            print(f"local llama.cpp upstream at {server.base_url} (model {local_model})", flush=True)
        settings = load_settings(values, where)
        secrets = load_secrets(settings)
        targets = [settings.upstream or ""] + [f"{r.model_name}: {r.base_url}" for r in settings.upstreams]
        print(f"privacy proxy on http://{settings.host}:{settings.port}/v1 -> {', '.join(t for t in targets if t)} "
              f"(audit: {settings.audit_dir / 'proxy_audit.jsonl'})", flush=True)
        if settings.processes > 1:
            # each worker process builds its own app from the validated settings (secrets from the environment)
            os.environ[SETTINGS_ENV] = settings.model_dump_json()
            if not os.environ.get(MULTIPROCESS_ENV):
                metrics_dir = tempfile.mkdtemp(prefix="cep-proxy-metrics-")
                os.environ[MULTIPROCESS_ENV] = metrics_dir
            print(f"{settings.processes} worker processes; /metrics sums them ({os.environ[MULTIPROCESS_ENV]})",
                  flush=True)
            print(f"loading detector {settings.detector!r} and method {settings.method!r} once to check them ...",
                  flush=True)
            failed = probe_worker()
            if failed:
                # uvicorn would restart a worker that fails to start, forever: fail once, here, instead
                print(f"error: a worker process could not start: {failed}", file=sys.stderr)
                return 2
            uvicorn.run("cloud_edge_privacy.proxy.cli:worker_app", factory=True, workers=settings.processes,
                        host=settings.host, port=settings.port, log_level=args.log_level,
                        timeout_graceful_shutdown=5)
            return 0
        print(f"loading detector {settings.detector!r} and method {settings.method!r} ...", flush=True)
        app = create_app(settings, secrets)
        uvicorn.run(app, host=settings.host, port=settings.port, log_level=args.log_level,
                    timeout_graceful_shutdown=5)
        return 0
    except BenchmarkError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        if server is not None:
            server.stop()


def main(argv: Optional[list] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m cloud_edge_privacy.proxy", description=__doc__)
    add_arguments(p)
    return run(p.parse_args(argv))
