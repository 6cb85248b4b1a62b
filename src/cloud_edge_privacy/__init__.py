"""Privacy-first cloud-edge LLM inference: the gateway library behind the Ianvs TAB benchmark example.

The public API (see README "Use it as a library")::

    from cloud_edge_privacy import Gateway
    gw = Gateway("pseudonym")                     # or Gateway(policy={"EMAIL": "placeholder", ...})
    entities = gw.analyze(text)                   # fine-grained types (PERSON, EMAIL, IBAN, ...)
    protected = gw.protect(text)                  # protected.text is what may leave the edge
    answer = protected.restore(cloud_answer)      # original values back on the edge
"""

from typing import Any

__version__ = "0.1.0"

# Loaded on first use, so `import cloud_edge_privacy` stays light (no spaCy until something needs it).
_API = ("Gateway", "Entity", "Protected", "Replacement", "ENTITY_TYPES", "KEEP", "analyze", "protect", "restore",
        "entity_type", "methods", "detectors")
__all__ = list(_API) + ["PrivacyGateway", "Randomness", "__version__"]


def __getattr__(name: str) -> Any:
    if name in _API:
        from . import api

        return getattr(api, name)
    if name == "PrivacyGateway":
        from .core.gateway import PrivacyGateway

        return PrivacyGateway
    if name == "Randomness":
        from .randomness import Randomness

        return Randomness
    raise AttributeError(f"module 'cloud_edge_privacy' has no attribute {name!r}")
