"""Start a SuperLink and SuperNodes on 127.0.0.1 as separate processes, submit the app with ``flwr run``.

Used by ``python -m cloud_edge_privacy.federated.flower`` and by the tests. Every process is started in its
own session (its process group holds the SuperExec and app processes Flower spawns under it) and is
stopped by group id when the :class:`LocalFederation` closes; logs go to ``<workdir>/logs/``. Nothing
listens on other than 127.0.0.1 (the SuperNodes' ClientAppIo ports are chosen by the OS).
"""
from __future__ import annotations

import json
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Dict, List, Mapping, Optional, Sequence, Type

from . import require_flwr

KILL_SETTLE_S = 10.0  # seconds killed processes may take to exit before stop() reports them

#: The example's Flower App (pyproject with the components and the default run config).
DEFAULT_APP_DIR = Path(__file__).resolve().parents[4] / "examples" / "TAB" / "federated_privacy_detector_bench" / "flower"
#: The same with SecAgg+ (``secagg`` ServerApp / ClientApp).
SECAGG_APP_DIR = DEFAULT_APP_DIR.parent / "flower_secagg"


def free_port() -> int:
    """A TCP port that is free on 127.0.0.1 now (bind to port 0 and release it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and math.isinf(value):
        return '"inf"'
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(str(value))  # a TOML basic string


def config_args(config: Mapping[str, Any]) -> str:
    """``key=value`` pairs as ``flwr run -c`` and ``--node-config`` parse them (TOML values)."""
    return " ".join(f"{k}={_toml_value(v)}" for k, v in config.items())


@dataclass
class _Proc:
    name: str
    popen: "subprocess.Popen[bytes]"
    log: Path


@dataclass
class LocalFederation:
    """A SuperLink (deployment or ``--simulation``) and SuperNodes on 127.0.0.1; a context manager."""

    workdir: Path
    simulation: bool = False
    procs: List[_Proc] = field(default_factory=list)
    fleet_address: str = ""
    control_address: str = ""

    def __post_init__(self) -> None:
        require_flwr()
        self.workdir = Path(self.workdir).resolve()
        (self.workdir / "logs").mkdir(parents=True, exist_ok=True)
        self.flwr_home = self.workdir / "flwr_home"
        self.flwr_home.mkdir(parents=True, exist_ok=True)
        self.bin_dir = Path(sys.executable).parent

    # --- processes --------------------------------------------------------------------------------

    def env(self) -> Dict[str, str]:
        """The children's environment: this interpreter's scripts first on PATH (Flower spawns
        ``flower-superexec``, ``flwr-serverapp`` and ``flwr-clientapp`` by name), a private FLWR_HOME,
        no telemetry and no update check (no network)."""
        env = dict(os.environ)
        env["PATH"] = f"{self.bin_dir}{os.pathsep}{env.get('PATH', '')}"
        env.update(FLWR_HOME=str(self.flwr_home), FLWR_TELEMETRY_ENABLED="0", FLWR_DISABLE_UPDATE_CHECK="1",
                   PYTHONUNBUFFERED="1")
        return env

    def _exe(self, name: str) -> str:
        path = shutil.which(name, path=str(self.bin_dir)) or shutil.which(name)
        if not path:
            raise FileNotFoundError(f"`{name}` not found next to {sys.executable} nor on PATH; "
                                    "install the federated extra (flwr)")
        return path

    def _spawn(self, name: str, args: List[str]) -> _Proc:
        log = self.workdir / "logs" / f"{name}.log"
        with open(log, "ab") as fh:
            popen = subprocess.Popen([self._exe(args[0])] + args[1:], stdout=fh, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, env=self.env(), cwd=str(self.workdir),
                                     start_new_session=True)
        proc = _Proc(name, popen, log)
        self.procs.append(proc)
        return proc

    def start_superlink(self, timeout: float = 60.0) -> None:
        """``flower-superlink --insecure`` on free 127.0.0.1 ports; waits until the Control API answers."""
        fleet, control, appio = free_port(), free_port(), free_port()
        self.fleet_address, self.control_address = f"127.0.0.1:{fleet}", f"127.0.0.1:{control}"
        args = ["flower-superlink", "--insecure", "--control-api-address", self.control_address,
                "--serverappio-api-address", f"127.0.0.1:{appio}", "--fleet-api-address", self.fleet_address,
                "--disable-runtime-dependency-installation"]
        if self.simulation:
            args.append("--simulation")
        proc = self._spawn("superlink", args)
        self._wait_for(lambda: "Starting Control API" in proc.log.read_text(errors="replace"), proc, timeout,
                       "the SuperLink's Control API")
        self._write_flwr_config()

    def start_supernode(self, index: int, node_config: Mapping[str, Any], timeout: float = 60.0) -> None:
        """One SuperNode (see :meth:`start_supernodes`)."""
        self.start_supernodes([node_config], timeout, first_index=index)

    def start_supernodes(self, node_configs: Sequence[Mapping[str, Any]], timeout: float = 60.0,
                         first_index: int = 0) -> None:
        """``flower-supernode --insecure --superlink <fleet> --node-config ...`` per config, started together;
        waits until each has registered (logged its node id)."""
        if self.simulation:
            raise RuntimeError("a simulation SuperLink runs virtual SuperNodes; start none")
        procs = [self._spawn(f"supernode{first_index + i}", [
            "flower-supernode", "--insecure", "--superlink", self.fleet_address,
            "--clientappio-api-address", "127.0.0.1:0", "--node-config", config_args(conf)])
            for i, conf in enumerate(node_configs)]
        for i, proc in enumerate(procs):
            self._wait_for(lambda p=proc: "SuperNode ID:" in p.log.read_text(errors="replace"), proc, timeout,
                           f"SuperNode {first_index + i} to connect")

    def _wait_for(self, ready: Any, proc: _Proc, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ready():
                return
            if proc.popen.poll() is not None:
                raise RuntimeError(f"{proc.name} exited with code {proc.popen.returncode} while waiting for {what}\n"
                                   + self.log_tails())
            time.sleep(0.2)
        raise TimeoutError(f"waited {timeout:.0f} s for {what}\n" + self.log_tails())

    def _write_flwr_config(self) -> None:
        (self.flwr_home / "config.toml").write_text(
            '[superlink]\ndefault = "local-test"\n\n[superlink.local-test]\n'
            f'address = "{self.control_address}"\ninsecure = true\n', encoding="utf-8")

    # --- runs -------------------------------------------------------------------------------------

    def run(self, run_config: Mapping[str, Any], app_dir: Path = DEFAULT_APP_DIR, timeout: float = 600.0,
            federation_config: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
        """``flwr run <app_dir> local-test --stream -c ...``; returns the ServerApp's result JSON.

        ``result-path`` is set to ``<workdir>/result_<n>.json`` unless the run config names one.
        """
        app_dir = Path(app_dir).resolve()
        if not (app_dir / "pyproject.toml").is_file():
            raise FileNotFoundError(f"{app_dir}/pyproject.toml: not a Flower App directory (pass --app-dir)")
        conf = dict(run_config)
        n = len(list(self.workdir.glob("result_*.json"))) + len(list(self.workdir.glob("flwr_run_*.log")))
        conf.setdefault("result-path", str(self.workdir / f"result_{n}.json"))
        result_path = Path(str(conf["result-path"])).resolve()
        args = [self._exe("flwr"), "run", str(app_dir), "local-test", "--stream", "-c", config_args(conf)]
        if federation_config:
            args += ["--federation-config", config_args(federation_config)]
        log = self.workdir / f"flwr_run_{n}.log"
        with open(log, "wb") as fh:
            try:
                rc = subprocess.run(args, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    env=self.env(), cwd=str(self.workdir), timeout=timeout).returncode
            except subprocess.TimeoutExpired as exc:
                raise TimeoutError(f"flwr run did not finish in {timeout:.0f} s\n" + self.log_tails(extra=[log])) from exc
        text = log.read_text(errors="replace")
        run_id = re.search(r"Successfully started run (\d+)", text)
        if rc != 0 or not run_id or not result_path.is_file():
            raise RuntimeError(f"flwr run failed (exit code {rc}, result file "
                               f"{'present' if result_path.is_file() else 'missing'})\n" + self.log_tails(extra=[log]))
        with open(result_path, encoding="utf-8") as fh:
            result: Dict[str, Any] = json.load(fh)
        result["run_id"] = int(run_id.group(1))
        result["result_path"] = str(result_path)
        return result

    # --- teardown ---------------------------------------------------------------------------------

    def log_tails(self, lines: int = 40, extra: Optional[List[Path]] = None) -> str:
        """The last ``lines`` lines of every log (for error messages)."""
        out = []
        for path in [p.log for p in self.procs] + list(extra or []):
            if path.is_file():
                tail = path.read_text(errors="replace").splitlines()[-lines:]
                out.append(f"--- {path.name} (last {len(tail)} lines) ---\n" + "\n".join(tail))
        return "\n".join(out)

    def stop(self, grace: float = 5.0) -> None:
        """SIGTERM each process group we started, then SIGKILL what is left."""
        for proc in reversed(self.procs):
            _signal_group(proc.popen, signal.SIGTERM)
        deadline = time.monotonic() + grace
        for proc in reversed(self.procs):
            try:
                proc.popen.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            _signal_group(proc.popen, signal.SIGKILL)  # the group's children (SuperExec, apps) too
            try:
                proc.popen.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        # SIGKILL is delivered at once but a large process (torch, Ray) can take a while to exit under load; a
        # grandchild is no child of ours, so ``wait`` cannot wait for it: look again, and signal again, until gone
        settle = time.monotonic() + KILL_SETTLE_S
        left = [pid for proc in self.procs for pid in live_group_members(proc.popen.pid)]
        while left and time.monotonic() < settle:
            time.sleep(0.1)
            for proc in self.procs:
                _signal_group(proc.popen, signal.SIGKILL)
            left = [pid for proc in self.procs for pid in live_group_members(proc.popen.pid)]
        self.procs.clear()
        if left:
            raise RuntimeError(f"processes still running {KILL_SETTLE_S:.0f}s after SIGKILL: {left}")

    def __enter__(self) -> "LocalFederation":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        self.stop()


def live_group_members(pgid: int) -> List[int]:
    """Pids of the processes of group ``pgid`` that are still running (zombies excluded: where PID 1 does not
    reap orphans, e.g. in some containers, a killed SuperExec stays a zombie; it holds no port and no CPU)."""
    proc = Path("/proc")
    if not proc.is_dir():  # not Linux: fall back to "does the group exist"
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return []
        return [pgid]
    alive = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) ": state ppid pgrp ...
        if int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(int(entry.name))
    return alive


def _signal_group(popen: "subprocess.Popen[bytes]", sig: int) -> None:
    try:
        os.killpg(popen.pid, sig)  # the session leader's pid is the group id (start_new_session=True)
    except (ProcessLookupError, PermissionError):
        pass


def deploy(workdir: Path, run_config: Mapping[str, Any], num_supernodes: int, app_dir: Path = DEFAULT_APP_DIR,
           timeout: float = 600.0, node_config: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """A SuperLink and ``num_supernodes`` SuperNodes (``partition-id=i num-partitions=n``), one run, stop all."""
    with LocalFederation(Path(workdir)) as fed:
        fed.start_superlink()
        fed.start_supernodes([{"partition-id": i, "num-partitions": num_supernodes, **dict(node_config or {})}
                              for i in range(num_supernodes)])
        return fed.run({"num-clients": num_supernodes, **dict(run_config)}, app_dir, timeout)


def simulate(workdir: Path, run_config: Mapping[str, Any], num_supernodes: int, app_dir: Path = DEFAULT_APP_DIR,
             timeout: float = 600.0, cpus_per_client: int = 1) -> Dict[str, Any]:
    """Flower's Simulation Runtime (Ray): a ``--simulation`` SuperLink with ``num_supernodes`` virtual nodes."""
    with LocalFederation(Path(workdir), simulation=True) as fed:
        fed.start_superlink()
        return fed.run({"num-clients": num_supernodes, **dict(run_config)}, app_dir, timeout,
                       federation_config={"num-supernodes": num_supernodes,
                                          "client-resources-num-cpus": cpus_per_client})
