"""``cloud-edge-privacy proxy``: run the privacy gateway as an OpenAI-compatible server."""
from __future__ import annotations

import argparse
import sys
from typing import Any, Dict, Optional

from .settings import CLIENT_KEY_ENV, UPSTREAM_KEY_ENV

LOCAL = "local"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The proxy's options (shared by the ``proxy`` subcommand and ``python -m cloud_edge_privacy.proxy``)."""
    p.add_argument("--upstream", required=True,
                   help="the upstream's OpenAI base URL (e.g. https://api.example.com/v1), or 'local' / "
                        "'local:MODEL' to start the local llama.cpp server as the upstream")
    p.add_argument("--host", default="127.0.0.1",
                   help=f"bind address (default 127.0.0.1; any other address requires ${CLIENT_KEY_ENV})")
    p.add_argument("--port", type=int, default=8088)
    p.add_argument("--method", default="pseudonym", help="privacy method (default: pseudonym)")
    p.add_argument("--detector", default="default", help="detector preset (default: default)")
    p.add_argument("--guard-detector", default="structured", help="egress-guard detector preset")
    p.add_argument("--model", default=None, help="model name sent upstream (default: the client's)")
    p.add_argument("--workers", type=int, default=1, help="privacy worker threads (each loads a detector)")
    p.add_argument("--audit-dir", default="proxy_audit", help="folder of proxy_audit.jsonl")
    p.add_argument("--audit-max-bytes", type=int, default=10_000_000, help="rotate the audit log past this size")
    p.add_argument("--max-body-bytes", type=int, default=2_000_000)
    p.add_argument("--timeout", type=float, default=120.0, help="upstream read timeout per attempt, seconds")
    p.add_argument("--max-retries", type=int, default=2, help="upstream retries (connection errors, 408/429/502-504)")
    p.add_argument("--upstream-key-env", default=UPSTREAM_KEY_ENV,
                   help=f"NAME of the variable holding the upstream API key (default {UPSTREAM_KEY_ENV})")
    p.add_argument("--client-key-env", default=CLIENT_KEY_ENV,
                   help=f"NAME of the variable holding the key clients must send (default {CLIENT_KEY_ENV})")
    p.add_argument("--log-level", default="warning")


def add_parser(subparsers: Any) -> None:
    """Register the ``proxy`` subcommand on the main CLI's subparsers."""
    p = subparsers.add_parser("proxy", help="run the privacy gateway as an OpenAI-compatible proxy")
    add_arguments(p)
    p.set_defaults(func=run)


def settings_from_args(args: argparse.Namespace, upstream: str) -> Dict[str, Any]:
    return {"upstream": upstream, "host": args.host, "port": args.port, "method": args.method,
            "detector": args.detector, "guard_detector": args.guard_detector, "model": args.model,
            "workers": args.workers, "audit_dir": args.audit_dir, "audit_max_bytes": args.audit_max_bytes,
            "max_body_bytes": args.max_body_bytes, "timeout_s": args.timeout, "max_retries": args.max_retries,
            "upstream_key_env": args.upstream_key_env, "client_key_env": args.client_key_env}


def run(args: argparse.Namespace) -> int:
    """Start (optionally) the local llama.cpp upstream, build the app, serve until interrupted."""
    import uvicorn

    from ..errors import BenchmarkError
    from .app import create_app
    from .settings import load_secrets, load_settings

    server: Optional[Any] = None
    try:
        upstream = args.upstream
        model = args.model
        if upstream == LOCAL or upstream.startswith(LOCAL + ":"):
            from ..models.local_server import LocalServer

            local_model = upstream.split(":", 1)[1] if ":" in upstream else "qwen2.5-coder-0.5b-instruct"
            server = LocalServer(local_model).start()
            upstream, model = server.base_url, model or local_model
            print(f"local llama.cpp upstream at {upstream} (model {local_model})", flush=True)
        values = settings_from_args(args, upstream)
        values["model"] = model
        settings = load_settings(values)
        secrets = load_secrets(settings)
        print(f"loading detector {settings.detector!r} and method {settings.method!r} ...", flush=True)
        app = create_app(settings, secrets)
        print(f"privacy proxy on http://{settings.host}:{settings.port}/v1 -> {settings.upstream} "
              f"(audit: {settings.audit_dir / 'proxy_audit.jsonl'})", flush=True)
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
