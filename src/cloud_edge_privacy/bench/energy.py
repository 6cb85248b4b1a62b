"""Energy of the edge device per request: RAPL counters when the machine exposes them, otherwise an estimate
from the CPU time the edge process measurably used.

PRISM's Table 1 reports the energy the *edge device* spends per prompt (for cloud-only: only idle and
transmission while waiting for the cloud).  Two sources, each labelled in every reading:

* ``rapl``: Intel/AMD RAPL package counters in ``/sys/class/powercap`` (microjoules, wrap-around handled).
  They measure the whole CPU package: a cloud server on the same machine is counted too.
* ``estimate``: ``idle_w * wall_s + core_w * cpu_s`` where ``cpu_s`` is the CPU time of this process (all its
  threads: detection, llama.cpp generation on the edge; not a child process such as the local "cloud"
  server) and ``wall_s`` the request's wall time.  ``idle_w`` (device baseline while the request is open) and
  ``core_w`` (extra power of one fully busy core) are assumptions, stated with the figures; the defaults model
  a 4-core, 28 W laptop CPU (7 W per busy core) on a 5 W platform baseline.  CPU time and wall time are
  recorded too, so anyone can recompute the energy with other constants.
"""
from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

POWERCAP = Path("/sys/class/powercap")
DEFAULT_IDLE_W = 5.0
DEFAULT_CORE_W = 7.0


@dataclass(frozen=True)
class EnergyModel:
    """The constants of the CPU-time estimate (watts)."""

    idle_w: float = DEFAULT_IDLE_W
    core_w: float = DEFAULT_CORE_W

    def __post_init__(self) -> None:
        for name in ("idle_w", "core_w"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and v >= 0):
                raise ValueError(f"{name} must be a number >= 0 (watts), got {v!r}")

    @classmethod
    def from_env(cls) -> "EnergyModel":
        """``CEP_ENERGY_IDLE_W`` / ``CEP_ENERGY_CORE_W`` override the defaults."""
        def num(var: str, default: float) -> float:
            raw = os.environ.get(var)
            if raw is None:
                return default
            try:
                return float(raw)
            except ValueError:
                raise ValueError(f"${var} must be a number of watts, got {raw!r}") from None

        return cls(num("CEP_ENERGY_IDLE_W", DEFAULT_IDLE_W), num("CEP_ENERGY_CORE_W", DEFAULT_CORE_W))

    def joules(self, wall_s: float, cpu_s: float) -> float:
        return self.idle_w * wall_s + self.core_w * cpu_s

    def label(self) -> str:
        return f"estimate: {self.idle_w:g} W x wall + {self.core_w:g} W x process CPU-seconds"


def rapl_packages(root: Path = POWERCAP) -> List[Tuple[Path, int]]:
    """Readable top-level RAPL package domains as (energy_uj file, max_energy_range_uj); [] if none."""
    out = []
    if not root.is_dir():
        return out
    for d in sorted(root.glob("*-rapl:*")):
        if d.name.count(":") != 1:  # sub-domains (core, uncore, dram) are inside the package figure
            continue
        f, rng = d / "energy_uj", d / "max_energy_range_uj"
        try:
            int(f.read_text())
            out.append((f, int(rng.read_text()) if rng.is_file() else 0))
        except (OSError, ValueError):
            continue
    return out


def _read_rapl(domains: List[Tuple[Path, int]]) -> List[int]:
    return [int(f.read_text()) for f, _ in domains]


@dataclass(frozen=True)
class EnergyReading:
    """One request's energy on the edge, with what it was computed from."""

    joules: float
    wall_s: float
    cpu_s: float
    method: str  # "rapl" or "estimate"
    detail: str

    def to_dict(self) -> Dict[str, Any]:
        return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in asdict(self).items()}


class EnergyMeter:
    """``with EnergyMeter() as m: ...`` then ``m.reading``; RAPL when readable (or ``use_rapl=False``)."""

    def __init__(self, model: Optional[EnergyModel] = None, use_rapl: bool = True, root: Path = POWERCAP) -> None:
        self.model = model or EnergyModel.from_env()
        self.domains = rapl_packages(root) if use_rapl else []
        self.reading: Optional[EnergyReading] = None

    def __enter__(self) -> "EnergyMeter":
        self._t0 = time.perf_counter()
        self._c0 = time.process_time()
        self._r0 = _read_rapl(self.domains) if self.domains else []
        return self

    def __exit__(self, *exc: Any) -> None:
        wall = time.perf_counter() - self._t0
        cpu = time.process_time() - self._c0
        if self.domains:
            r1 = _read_rapl(self.domains)
            uj = 0
            for (_, rng), a, b in zip(self.domains, self._r0, r1):
                uj += b - a if b >= a else b + rng - a  # the counter wrapped around
            self.reading = EnergyReading(uj / 1e6, wall, cpu, "rapl",
                                         f"RAPL package counters ({len(self.domains)} domain(s)), whole package")
        else:
            self.reading = EnergyReading(self.model.joules(wall, cpu), wall, cpu, "estimate", self.model.label())
