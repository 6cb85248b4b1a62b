"""The two randomness modes of the edge (docs/design.md invariant 4).

* **deployment** (default for the library, ``anonymize`` and the proxy): noise comes from the operating
  system's CSPRNG and every keyed choice (pseudonyms, date shifts) is an HMAC under a secret key read from
  ``$CEP_SECRET_KEY``.  An adversary who knows the code, the YAML and the models cannot recompute either.
* **benchmark**: everything is derived from the YAML seed, so a run is reproducible.  Its guarantees do
  NOT hold against whoever knows the seed; :attr:`Randomness.label` says so and reports print it.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from .errors import ConfigError

SECRET_KEY_ENV = "CEP_SECRET_KEY"
DEPLOYMENT = "deployment"
BENCHMARK = "benchmark"
BENCHMARK_CAVEAT = ("benchmark randomness (reproducible from the YAML seed): its privacy guarantees do not hold "
                    "against anyone who knows the seed")


def _canonical(parts: tuple) -> bytes:
    return json.dumps(list(parts), sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str).encode()


@dataclass(frozen=True)
class Randomness:
    """Where an operator's randomness comes from.  Immutable; safe to share between threads.

    ``key`` is the HMAC key for keyed choices; ``seed`` is set only in benchmark mode.
    ``persistent_key`` tells whether the key survives the process (it was given, or derived from the seed);
    a per-process key makes pseudonyms reversible only within this process.
    """

    mode: str
    key: bytes = field(repr=False)
    seed: Optional[int] = None
    persistent_key: bool = True

    def __post_init__(self) -> None:
        if self.mode not in (DEPLOYMENT, BENCHMARK):
            raise ValueError(f"randomness mode must be {DEPLOYMENT!r} or {BENCHMARK!r}, got {self.mode!r}")
        if self.mode == BENCHMARK and self.seed is None:
            raise ValueError("benchmark randomness needs a seed")
        if len(self.key) < 16:
            raise ValueError("the secret key must be at least 16 bytes")

    # -- construction ---------------------------------------------------------------------------
    @classmethod
    def benchmark(cls, seed: int) -> "Randomness":
        """Reproducible randomness from a (public) seed; label every result with :data:`BENCHMARK_CAVEAT`."""
        key = hashlib.sha256(f"cloud-edge-privacy/benchmark-seed/{int(seed)}".encode()).digest()
        return cls(BENCHMARK, key, int(seed), True)

    @classmethod
    def deployment(cls, key: Optional[bytes] = None, env: str = SECRET_KEY_ENV,
                   require_key: bool = False) -> "Randomness":
        """CSPRNG noise and HMAC choices under ``key`` or the key in ``$env`` (hex, base64 or text, >= 16 bytes).

        Without a key: a fresh random key for this process, unless ``require_key`` (reversibility across
        processes or requests was asked for), which raises a :class:`ConfigError` naming the variable.
        """
        if key is None:
            raw = os.environ.get(env, "")
            if raw:
                key = _decode_key(raw, env)
            elif require_key:
                raise ConfigError(f"${env} is not set: a secret key (at least 16 bytes, e.g. "
                                  f"`python -c 'import secrets; print(secrets.token_hex(32))'`) is needed for "
                                  f"pseudonyms that stay the same and reversible across requests")
            else:
                return cls(DEPLOYMENT, secrets.token_bytes(32), None, False)
        return cls(DEPLOYMENT, key, None, True)

    # -- keyed, deterministic choices -----------------------------------------------------------
    def digest(self, *parts: Any) -> bytes:
        """HMAC-SHA256 of the canonical JSON of ``parts`` under the key."""
        return hmac.new(self.key, _canonical(parts), hashlib.sha256).digest()

    def keyed_int(self, *parts: Any, bits: int = 64) -> int:
        """A keyed integer in [0, 2**bits) (bits <= 256)."""
        return int.from_bytes(self.digest(*parts), "big") >> (256 - bits)

    def keyed_rng(self, *parts: Any) -> np.random.Generator:
        """A generator determined by the key and ``parts``: the same inputs give the same choices."""
        return np.random.default_rng(int.from_bytes(self.digest(*parts), "big"))

    # -- noise ------------------------------------------------------------------------------------
    def noise_random_state(self, *parts: Any) -> Optional[int]:
        """``random_state`` for a diffprivlib mechanism: ``None`` (its SystemRandom CSPRNG) in deployment,
        a seed derived from the benchmark seed and ``parts`` in benchmark mode."""
        if self.mode == DEPLOYMENT:
            return None
        return self.keyed_int("noise", *parts, bits=31)

    def noise_rng(self, *parts: Any) -> np.random.Generator:
        """A numpy generator for noise: fresh OS entropy (deployment) or derived from the seed (benchmark)."""
        if self.mode == DEPLOYMENT:
            return np.random.default_rng(secrets.randbits(128))
        return self.keyed_rng("noise", *parts)

    @property
    def label(self) -> str:
        if self.mode == BENCHMARK:
            return f"benchmark (seed {self.seed}): {BENCHMARK_CAVEAT}"
        return "deployment (OS CSPRNG noise; keyed HMAC choices under a secret key" + \
            ("" if self.persistent_key else ", generated for this process only") + ")"


def _decode_key(raw: str, env: str) -> bytes:
    raw = raw.strip()
    try:
        key = bytes.fromhex(raw)
    except ValueError:
        key = raw.encode("utf-8")
    if len(key) < 16:
        raise ConfigError(f"${env} holds a key of {len(key)} bytes; use at least 16 (e.g. 64 hex characters)")
    return key
