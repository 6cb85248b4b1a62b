"""OpenAI-style error bodies and strict JSON parsing of upstream answers for the proxy's HTTP handlers (the
HTTP calls to the upstream go through :class:`~..models.cloud_client.AsyncCloudClient`, the same seam as the
benchmark)."""
from __future__ import annotations

import json
from typing import Any, Dict, Optional


def error_body(message: str, err_type: str, code: Optional[str] = None) -> Dict[str, Any]:
    """An OpenAI-style error object."""
    return {"error": {"message": message, "type": err_type, "param": None, "code": code}}


def parse_upstream_json(data: bytes) -> Any:
    """An upstream answer parsed strictly: NaN and Infinity (not JSON) make it invalid (None)."""
    def refuse(lit: str) -> Any:
        raise ValueError(lit)

    try:
        return json.loads(data, parse_constant=refuse)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError, ValueError):
        return None
