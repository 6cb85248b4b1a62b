"""The privacy gateway as an OpenAI-compatible proxy (docs/proxy.md): the edge pipeline in front of any
OpenAI-compatible upstream, with streaming restoration and no per-conversation server state."""
from .settings import ProxySettings, Secrets, load_secrets, load_settings

__all__ = ["ProxySettings", "Secrets", "load_secrets", "load_settings", "create_app"]


def create_app(*args, **kwargs):  # type: ignore[no-untyped-def]
    """Lazy import of :func:`.app.create_app` (FastAPI is imported only when the proxy is used)."""
    from .app import create_app as _create

    return _create(*args, **kwargs)
