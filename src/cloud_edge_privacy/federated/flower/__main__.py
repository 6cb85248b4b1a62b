"""Run the federated detector with Flower on this machine.

    python -m cloud_edge_privacy.federated.flower simulate --smoke --rounds 3 --clients 3   # Simulation Runtime (Ray)
    python -m cloud_edge_privacy.federated.flower deploy --smoke --rounds 3 --clients 3     # SuperLink + SuperNodes
    python -m cloud_edge_privacy.federated.flower deploy --method fedadam_ldp_accounted --epsilon 10

``deploy`` starts ``flower-superlink --insecure`` and one ``flower-supernode --insecure`` per client on
127.0.0.1 (``--node-config "partition-id=i num-partitions=n"``), submits the app with ``flwr run`` and stops
every process afterwards. ``simulate`` starts a ``--simulation`` SuperLink (virtual SuperNodes on Ray) instead.
Both print the ServerApp's summary and leave the result JSON and every log in ``--out``.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

from . import require_flwr

_REPO = Path(__file__).resolve().parents[4]


def _default_tab_dir() -> Path:
    env = os.environ.get("CEP_TAB_DIR") or os.environ.get("TAB_DATA_DIR")
    return Path(env) if env else _REPO / "data" / "tab"


def build_run_config(a: argparse.Namespace) -> Dict[str, Any]:
    """The ``flwr run -c`` overrides from the command line (absolute paths)."""
    tab = _default_tab_dir()
    conf: Dict[str, Any] = {
        "method": a.method, "epsilon": a.epsilon, "seed": a.seed, "smoke": a.smoke, "threads": a.threads,
        "randomness": a.randomness, "model": a.model,
        "train-path": str(Path(a.train or tab / "echr_train.json").resolve()),
        "dev-path": str(Path(a.dev or tab / "echr_dev.json").resolve()),
        "max-train-docs": a.max_train_docs if a.max_train_docs is not None else (6 if a.smoke else 0),
        "max-dev-docs": a.max_dev_docs if a.max_dev_docs is not None else (3 if a.smoke else 0),
    }
    if a.rounds is not None:
        conf["rounds"] = a.rounds
    if a.participation is not None:
        conf["participation"] = a.participation
    if a.model_path:
        conf["model-path"] = str(Path(a.model_path).resolve())
    if a.secagg:
        conf["secagg"] = True
        conf.setdefault("participation", 1.0)
    return conf


def summary(result: Dict[str, Any]) -> List[str]:
    """Human-readable lines for a result JSON."""
    p = result.get("privacy", {})
    lines = [f"method {result['method']}  epsilon target {p.get('epsilon_target')}  "
             f"accounted over {p.get('rounds_accounted', result['rounds'])} rounds: {p.get('epsilon_total_rdp', 'inf')}"
             + (f"  (sigma {p['sigma']:.4g}, delta {p['delta']:.4g})" if "sigma" in p else ""),
             ("secure aggregation (SecAgg+): the server saw only the sum of each round's updates"
              if result.get("secagg") else "clients (partition -> node, windows): " + ", ".join(
                 f"{k} -> {v['node_id']} ({v['num_windows']})" for k, v in sorted(result["clients"].items())))]
    for h in result["history"]:
        lines.append(f"  round {h['round'] + 1}: " + (f"partitions {h['partitions']}  " if "partitions" in h else "")
                     + f"samples {h['num_samples']}  " + (f"loss {h['loss']}  " if "loss" in h else "")
                     + f"global norm {h['global_norm']}  {h.get('seconds')} s  {h.get('bytes')} bytes on the wire")
    lines.append(f"weights: initial norm {result['initial_norm']}, final norm {result['final_norm']}, "
                 f"change {result['weight_change_norm']}")
    if "dev" in result:
        d = result["dev"]
        lines.append(f"dev ({d['n_docs']} docs, {d['n_entities']} DIRECT+QUASI entities): PSR {d['PSR']:.4f}  "
                     f"token precision {d['token_precision']:.4f}")
    return lines


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cloud_edge_privacy.federated.flower", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=("simulate", "deploy"))
    ap.add_argument("--clients", type=int, default=3, help="SuperNodes / virtual SuperNodes (partitions)")
    ap.add_argument("--rounds", type=int, default=None, help="default: the run config's (smoke: 2)")
    ap.add_argument("--method", default="fedavg",
                    help="fedavg | fedadam | dp_fedavg | dp_ftrl | fedadam_ldp_paper | fedadam_ldp_accounted | "
                         "<aggregator>+<privacy>")
    ap.add_argument("--model", choices=("hashed_cnn", "minilm"), default="hashed_cnn",
                    help="the detector: from-scratch hashed CNN or the frozen-MiniLM head")
    ap.add_argument("--secagg", action="store_true",
                    help="secure aggregation (SecAgg+; fedavg / dp_fedavg; every node every round)")
    ap.add_argument("--epsilon", type=float, default=math.inf, help="target epsilon of the DP methods")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--randomness", choices=("deployment", "benchmark"), default="deployment",
                    help="deployment: DP noise from the OS CSPRNG; benchmark: from --seed, reproducible and equal "
                         "to the simulation, NOT private against whoever knows the seed")
    ap.add_argument("--participation", type=float, default=None)
    ap.add_argument("--smoke", action="store_true", help="tiny model, 6 train / 3 dev documents")
    ap.add_argument("--train", default=None, help="TAB train JSON (default: $CEP_TAB_DIR or data/tab)")
    ap.add_argument("--dev", default=None, help="TAB dev JSON for the server-side evaluation")
    ap.add_argument("--max-train-docs", type=int, default=None)
    ap.add_argument("--max-dev-docs", type=int, default=None)
    ap.add_argument("--model-path", default=None, help="save the final model (usable by --detector federated)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads per app process")
    ap.add_argument("--out", default=None, help="work directory: result JSON, logs, FLWR_HOME (default: a new temp dir)")
    ap.add_argument("--app-dir", default=None, help="the Flower App directory (default: the example's flower/)")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds for the whole run")
    a = ap.parse_args(argv)
    try:
        require_flwr()
    except ImportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from .launch import DEFAULT_APP_DIR, SECAGG_APP_DIR, deploy, simulate

    workdir = Path(a.out) if a.out else Path(tempfile.mkdtemp(prefix=f"flower_{a.mode}_"))
    conf = build_run_config(a)
    app_dir = Path(a.app_dir) if a.app_dir else (SECAGG_APP_DIR if a.secagg else DEFAULT_APP_DIR)
    t0 = time.perf_counter()
    try:
        if a.mode == "simulate":
            result = simulate(workdir, conf, a.clients, app_dir, a.timeout)
        else:
            result = deploy(workdir, conf, a.clients, app_dir, a.timeout)
    except ImportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (RuntimeError, TimeoutError, FileNotFoundError) as exc:
        print(f"error: {exc}\n(logs in {workdir})", file=sys.stderr)
        return 1
    wall = time.perf_counter() - t0
    print("\n".join(summary(result)))
    print(f"{a.mode}: {a.clients} clients, run {result['run_id']}, {wall:.1f} s wall; "
          f"result {result['result_path']}, logs in {workdir}/logs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
