"""What each post-detection step is worth, measured by switching it off, on three sources it was not all written from.

For every step of a preset (``pipeline.STEPS``), the preset is run without it on: the real development prompts (5-fold,
out of fold, as ``eval_user_prompts.py --set real``), TAB dev (``--set tab``) and the multilingual dev set (``--set
multilingual``).  Printed per step and set: the change in fully masked units (recall: negative means the step
*adds* recall) and in token precision (negative means the step removes over-masking), against the whole preset in
the same run.  A step that helps nowhere it was not written from is a candidate to drop.

    .venv/bin/python scripts/ablate_steps.py [--detector default] [--steps tidy,propagate] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "scripts"))
from eval_user_prompts import detect, load_set, score  # noqa: E402

from cloud_edge_privacy.detection.presets import PRESETS  # noqa: E402

SETS = ("real", "tab", "multilingual")


def figures(name: str, docs: List[Dict[str, Any]], which: str, off: tuple) -> Dict[str, float]:
    res = score(docs, detect(name, docs, which == "real", False, off))
    return {"fully_masked": res["fully_masked"], "precision": round(res["token_precision"], 4)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--detector", default="default")
    ap.add_argument("--steps", default="", help="only these steps (comma-separated; default: every step it runs)")
    ap.add_argument("--json", default=None, help="write the figures to this file")
    args = ap.parse_args()
    steps = [s for s in args.steps.split(",") if s] or list(PRESETS[args.detector].steps)
    data = {w: load_set(w, "test") for w in SETS}
    t0 = time.perf_counter()
    base = {w: figures(args.detector, data[w], w, ()) for w in SETS}
    print(f"{args.detector}: " + "; ".join(f"{w} fully masked {b['fully_masked']:.3f}, precision {b['precision']:.3f}"
                                          for w, b in base.items()) + f" ({time.perf_counter() - t0:.0f}s)\n")
    print("| step switched off | " + " | ".join(f"{w}: d fully masked | {w}: d precision" for w in SETS) + " |")
    print("|---|" + "---|---|" * len(SETS))
    out: Dict[str, Any] = {"base": base}
    for step in steps:
        row = {w: figures(args.detector, data[w], w, (step,)) for w in SETS}
        out[step] = row
        cells = [f"{row[w]['fully_masked'] - base[w]['fully_masked']:+.3f} | {row[w]['precision'] - base[w]['precision']:+.3f}"
                 for w in SETS]
        print(f"| `{step}` | " + " | ".join(cells) + " |", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
