"""The federated detector as Flower apps (``flwr`` 1.32.1, Message API), over the same plain functions.

* :mod:`.core`: settings, one client round, the server loop (no ``flwr`` import);
* :mod:`.apps`: the ``ServerApp`` / ``ClientApp`` that Flower loads;
* :mod:`.launch`: SuperLink / SuperNode processes on 127.0.0.1 and ``flwr run`` (used by the CLI and the tests);
* ``python -m cloud_edge_privacy.federated.flower {simulate,deploy}``: the command line.
"""
from __future__ import annotations

FLWR_VERSION = "1.32.1"
INSTALL_HINT = (f"Flower (flwr=={FLWR_VERSION}) is not installed: install the federated extra, "
                "e.g. `.venv/bin/pip install -e '.[federated]'` (scripts/setup.sh does it)")


def require_flwr() -> None:
    """Raise ImportError with the install command when ``flwr`` is missing or is another version."""
    try:
        import flwr
    except ImportError as exc:
        raise ImportError(INSTALL_HINT) from exc
    version = getattr(flwr, "__version__", "")
    if version and version != FLWR_VERSION:
        import warnings

        warnings.warn(f"flwr {version} is installed; these apps are written and tested against {FLWR_VERSION}",
                      stacklevel=2)
