"""The proxy's validated configuration.  Secrets are never configuration values: only the NAMES of the
environment variables that hold them are, and the values are read once at start-up."""
from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..errors import ConfigError

UPSTREAM_KEY_ENV = "CEP_UPSTREAM_API_KEY"
CLIENT_KEY_ENV = "CEP_PROXY_CLIENT_KEY"
SCOPE = "cep-proxy"  # one keyed scope for every request: a value gets the same surrogate in every turn
PER_KEY, PER_CONVERSATION, PER_REQUEST = "key", "conversation", "request"  # pseudonym scopes


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and ``localhost``; any other bind address is reachable from elsewhere."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _http_url(v: str) -> str:
    if not v.startswith(("http://", "https://")):
        raise ValueError("must be an http(s) URL (the OpenAI base URL, usually ending in /v1)")
    return v.rstrip("/")


class UpstreamRoute(BaseModel):
    """One entry of ``upstreams`` (as LiteLLM's ``model_list``): requests for ``model_name`` go to
    ``base_url`` as ``model``, with the key in ``$api_key_env``."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    model_name: str = Field(min_length=1, description="the model name clients ask for")
    base_url: str
    model: Optional[str] = Field(None, description="the model name sent upstream (default: model_name)")
    api_key_env: str = UPSTREAM_KEY_ENV

    @field_validator("base_url")
    @classmethod
    def _url(cls, v: str) -> str:
        return _http_url(v)


class ProxySettings(BaseModel):
    """What ``cloud-edge-privacy proxy`` takes (see ``docs/proxy.md``)."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    upstream: Optional[str] = Field(None, description="the default upstream's OpenAI base URL, e.g. "
                                                      "http://127.0.0.1:8080/v1 (for models not in upstreams)")
    upstreams: List[UpstreamRoute] = Field(default_factory=list, description="upstreams by client model name")
    host: str = "127.0.0.1"
    port: int = Field(8088, ge=0, le=65535)
    method: str = "pseudonym"
    method_params: Dict[str, Any] = Field(default_factory=dict)
    detector: str = "default"
    guard_detector: str = "structured"
    pseudonym_scope: Literal["key", "conversation", "request"] = Field(
        PER_KEY, description="key: a value gets the same surrogate in every request; conversation: per "
                             "conversation (X-Conversation-Id header or derived from the first user message); "
                             "request: fresh surrogates in every request")
    model: Optional[str] = Field(None, description="model name sent upstream (default: the client's)")
    workers: int = Field(1, ge=1, le=16, description="privacy worker threads for small requests, each with its "
                                                     "own detector")
    large_request_chars: int = Field(8_000, ge=0, description="requests with more characters of text than this "
                                     "are protected in a separate worker process (0: no large lane)")
    max_privacy_chars: int = Field(400_000, ge=1000, description="at most this many characters of text per "
                                   "request are protected; more is a 413 (nothing is sent)")
    privacy_time_budget_s: float = Field(120.0, gt=0, description="a large request whose protection takes "
                                         "longer is stopped and answered 422 (nothing is sent)")
    lane_start_timeout_s: float = Field(300.0, gt=0, description="time allowed for the large lane's worker "
                                        "process to load its models")
    max_body_bytes: int = Field(2_000_000, ge=1024)
    max_messages: int = Field(512, ge=1)
    timeout_s: float = Field(120.0, gt=0)
    connect_timeout_s: float = Field(5.0, gt=0)
    max_retries: int = Field(2, ge=0, le=5)
    audit_dir: Path = Path("proxy_audit")
    audit_max_bytes: int = Field(10_000_000, ge=10_000)
    upstream_key_env: str = UPSTREAM_KEY_ENV
    client_key_env: str = CLIENT_KEY_ENV

    @field_validator("upstream")
    @classmethod
    def _url(cls, v: Optional[str]) -> Optional[str]:
        return None if v is None else _http_url(v)

    @model_validator(mode="after")
    def _method(self) -> "ProxySettings":
        if self.method == "none":
            raise ValueError("the proxy always protects: privacy method 'none' is for benchmark baselines only")
        if self.upstream is None and not self.upstreams:
            raise ValueError("no upstream: set 'upstream' (a base URL) or 'upstreams' (a list of model_name, "
                             "base_url, model, api_key_env)")
        names = [r.model_name for r in self.upstreams]
        if len(set(names)) != len(names):
            raise ValueError("upstreams: each model_name may appear once")
        return self

    def route(self, model_name: Any) -> Optional[UpstreamRoute]:
        """The upstreams entry for a client's model name (None: the default upstream)."""
        return next((r for r in self.upstreams if r.model_name == model_name), None)


@dataclass(frozen=True)
class Secrets:
    """Keys read from the environment; ``repr`` never shows them."""

    upstream_key: str = field(default="", repr=False)
    client_key: str = field(default="", repr=False)
    route_keys: Dict[str, str] = field(default_factory=dict, repr=False)  # upstreams model_name -> key


def load_settings(values: Dict[str, Any], where: str = "proxy settings") -> ProxySettings:
    try:
        return ProxySettings.model_validate(values)
    except ValidationError as exc:
        from ..core.module_configs import describe_errors

        raise ConfigError(f"{where}: {describe_errors(exc, ProxySettings)}") from None


def read_config_file(path: str) -> Dict[str, Any]:
    """The settings in a YAML config file (the same keys as :class:`ProxySettings`, see docs/proxy.md);
    errors name the file (unknown keys: with a "did you mean")."""
    import yaml

    try:
        with open(path, encoding="utf-8") as fh:
            data = yaml.safe_load(fh)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the proxy config ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({type(exc).__name__})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the proxy config must be a mapping of setting -> value")
    return data


def load_secrets(settings: ProxySettings, env: Optional[Dict[str, str]] = None) -> Secrets:
    """Read the upstream and client keys; a non-loopback bind address without a client key is an error."""
    env = dict(os.environ) if env is None else env
    client_key = env.get(settings.client_key_env, "")
    if not is_loopback(settings.host) and not client_key:
        raise ConfigError(f"the proxy is bound to {settings.host}, which is reachable from other hosts: set "
                          f"${settings.client_key_env} to a client key (clients send it as their API key)")
    if client_key and len(client_key) < 16:
        raise ConfigError(f"${settings.client_key_env} must be at least 16 characters")
    routes = {r.model_name: env.get(r.api_key_env, "") for r in settings.upstreams}
    return Secrets(env.get(settings.upstream_key_env, ""), client_key, routes)
