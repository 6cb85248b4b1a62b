"""The machine's state beside every wall-clock metric: when two test cases' timings can be compared.

Each runner records, when a test case finishes, the load averages, the usable cores and the process's CPU
affinity (``test_case.json`` → ``machine``; bench/case_record.py).  Latency, overheads (LO/TI), completion time
and energy measure the machine as much as the method: on a shared machine two runs of the same configuration
differed tenfold.  The report therefore prints the load next to those columns and says plainly when they are
not comparable: a test case ran on an overloaded machine, the load differed between test cases, the cores
differed, or nothing was recorded.
"""
from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Sequence

WALL_CLOCK = ("latency_mean_ms", "lo_pct", "ti_pct", "completion_time_s", "edge_energy_j")
OVERLOADED = 1.0      # 5-minute load per usable core above which timings measure contention
LOAD_SPREAD = 0.5     # difference in load per core between test cases above which timings are not comparable


def usable_cores(machine: Dict[str, Any]) -> int:
    """Cores the process could run on (its affinity), else the machine's count; 0 when unknown."""
    return len(machine.get("cpu_affinity") or []) or int(machine.get("cpu_count") or 0)


def load_per_core(machine: Optional[Dict[str, Any]]) -> float:
    """The 5-minute load average divided by the usable cores (NaN when not recorded)."""
    if not machine:
        return math.nan
    load, cores = machine.get("loadavg_1_5_15") or [], usable_cores(machine)
    return float(load[1]) / cores if len(load) > 1 and cores else math.nan


def machine_cell(machine: Optional[Dict[str, Any]]) -> str:
    """``load 2.10 / 2 cores, unpinned`` (5-minute load average) or ``not recorded``."""
    if not machine or not machine.get("loadavg_1_5_15"):
        return "not recorded"
    pin = "pinned to " + ",".join(str(c) for c in machine["cpu_affinity"]) if machine.get("pinned") else "unpinned"
    return f"load {float(machine['loadavg_1_5_15'][1]):.2f} / {usable_cores(machine)} cores, {pin}"


def comparability(machines: Dict[str, Optional[Dict[str, Any]]]) -> List[str]:
    """Why the wall-clock metrics of these test cases cannot be compared (empty when they can)."""
    issues: List[str] = []
    missing = [label for label, m in machines.items() if not m or not m.get("loadavg_1_5_15")]
    if missing:
        issues.append("no machine state was recorded for " + ", ".join(missing) + ": their timings cannot be judged")
    per_core = {label: load_per_core(m) for label, m in machines.items() if label not in missing}
    busy = [f"{label} ({v:.2f})" for label, v in per_core.items() if v > OVERLOADED]
    if busy:
        issues.append(f"the machine was overloaded (5-minute load per core above {OVERLOADED:g}) while "
                      + ", ".join(busy) + " ran: those timings measure contention, not the method")
    values = [v for v in per_core.values() if not math.isnan(v)]
    if len(values) > 1 and max(values) - min(values) > LOAD_SPREAD:
        issues.append(f"the load per core differed by {max(values) - min(values):.2f} between test cases "
                      f"(more than {LOAD_SPREAD:g}): timing differences between rows are not caused by the methods "
                      "alone")
    cores = {usable_cores(m) for label, m in machines.items() if label not in missing}
    if len(cores) > 1:
        issues.append("the test cases ran on different numbers of cores (" + ", ".join(map(str, sorted(cores))) + ")")
    return issues


def section(cases: Sequence[Dict[str, Any]], metric_names: Sequence[str]) -> List[str]:
    """The report's "Latency conditions" section (empty when the job has no wall-clock metric)."""
    clock = [m for m in metric_names if m in WALL_CLOCK]
    if not clock or not cases:
        return []
    machines = {c["label"]: (c.get("meta") or {}).get("machine") for c in cases}
    out = ["## Latency conditions", "",
           "The wall-clock metrics (" + ", ".join(f"`{m}`" for m in clock) + ") measure this machine as much as "
           "the method. Recorded when each test case finished: the 5-minute load average (about the last test "
           "case's duration), the cores the process could use and whether it was pinned to some of them.", "",
           "| test case | load 1 / 5 / 15 min | usable cores | pinning | load per core (5 min) |",
           "|---|---|---|---|---|"]
    for label, m in machines.items():
        if not m or not m.get("loadavg_1_5_15"):
            out.append(f"| {label} | not recorded | | | |")
            continue
        load = " / ".join(f"{float(v):.2f}" for v in m["loadavg_1_5_15"])
        pin = "pinned to " + ",".join(map(str, m["cpu_affinity"])) if m.get("pinned") else "none"
        out.append(f"| {label} | {load} | {usable_cores(m)} of {m.get('cpu_count')} | {pin} | "
                   f"{load_per_core(m):.2f} |")
    issues = comparability(machines)
    out.append("")
    if issues:
        out += ["**These wall-clock figures are not comparable:**", ""] + [f"- {i}" for i in issues]
    else:
        out.append("The load stayed below one process per core and within "
                   f"{LOAD_SPREAD:g} per core between test cases: the timings are comparable within this run "
                   "(not with another machine or another run).")
    return out + [""]
