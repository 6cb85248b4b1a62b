"""Technical text through the gateway: real code, configuration and markup, none of it written here.

Over-masking of code is what makes developers switch a gateway off ("hexane" a person, ``username`` a secret, a
refused HTML prompt).  This measures it on text nobody here wrote or tuned on: snippets of the source files of the
pinned packages installed in ``.venv`` (Python; YAML, JSON, TOML, INI and CFG files; HTML, CSS and JavaScript),
drawn with a fixed seed, each sent as a user would paste it (a short instruction and a fenced block).  Lines that
may name people (copyright, author, e-mail, URL lines) are left out of the snippets, so every word of a snippet is
non-private: the figure is the share of its words the gateway keeps, and how many requests it refuses.  The same
pinned packages give the same snippets (``--list`` prints the files and lines drawn).

    .venv/bin/python scripts/eval_technical.py [--split test] [--n 150] [--seed 49] [--detectors default,presidio]
"""
from __future__ import annotations

import argparse
import os
import random
import re
import sys
import sysconfig
import time
from collections import Counter
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

# The packages whose files are read (all pinned by pyproject.toml or by what it pins), in two fixed halves: rules
# about technical text are developed on ``dev`` and reported on ``test`` (files of other packages).
SPLITS = {"dev": ("fastapi", "pydantic", "spacy", "markdown_it", "presidio_analyzer", "matplotlib", "faker",
                  "stdnum", "numpy", "ray"),
          "test": ("httpx", "yaml", "uvicorn", "sklearn", "tqdm", "phonenumbers", "openai", "thinc", "flwr", "jinja2",
                   "starlette", "onnxruntime", "torch", "pandas")}
KINDS = {"code": (".py",), "config": (".yaml", ".yml", ".json", ".toml", ".ini", ".cfg"),
         "markup": (".html", ".css", ".js", ".xml")}
SHARE = {"code": 0.5, "config": 0.3, "markup": 0.2}
INSTRUCTIONS = {"code": "Why does this code fail? Please fix it.", "config": "Explain what this configuration does.",
                "markup": "Can you tidy up this markup?"}
FENCE = {"code": "python", "config": "", "markup": ""}
_PERSONAL = re.compile(r"(?i)copyright|author|maintainer|licen[cs]e|@[\w-]+\.\w|https?://|www\.|\(c\)|©")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]+")


def candidate_files(root: Path, packages: Sequence[str]) -> Dict[str, List[Path]]:
    """The files of each kind under ``packages``, sorted (so the draw is the same on every machine)."""
    out: Dict[str, List[Path]] = {k: [] for k in KINDS}
    for pkg in packages:
        base = root / pkg
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            if not path.is_file() or path.stat().st_size > 200_000 or "test" in path.name.lower():
                continue
            for kind, exts in KINDS.items():
                if path.suffix in exts:
                    out[kind].append(path)
    return out


def snippet(path: Path, rng: random.Random, lines: Tuple[int, int] = (6, 24)) -> Tuple[int, str]:
    """A run of consecutive lines of ``path`` without personal lines (its first line number and text), or (0, "")."""
    try:
        rows = path.read_text(encoding="utf-8").splitlines()
    except (UnicodeDecodeError, OSError):
        return 0, ""
    if len(rows) < lines[0]:
        return 0, ""
    n = rng.randint(*lines)
    start = rng.randrange(0, max(1, len(rows) - n))
    chunk = [r[:200] for r in rows[start:start + n] if not _PERSONAL.search(r)]
    text = "\n".join(chunk).strip("\n")
    return (start + 1, text) if len(_WORD.findall(text)) >= 8 else (0, "")


def draw(n: int, seed: int, split: str = "test") -> List[Dict[str, str]]:
    """``n`` snippets of the packages of ``split``, by kind in the proportions of :data:`SHARE`."""
    root = Path(sysconfig.get_paths()["purelib"])
    files = candidate_files(root, SPLITS[split])
    rng = random.Random(seed)
    out: List[Dict[str, str]] = []
    for kind, share in SHARE.items():
        want, tries = round(n * share), 0
        pool = files[kind]
        while pool and sum(1 for s in out if s["kind"] == kind) < want and tries < 50 * want:
            tries += 1
            path = pool[rng.randrange(len(pool))]
            line, text = snippet(path, rng)
            if text:
                fence = FENCE[kind] or path.suffix.lstrip(".")
                out.append({"kind": kind, "file": f"{path.relative_to(root)}:{line}", "snippet": text,
                            "prompt": f"{INSTRUCTIONS[kind]}\n\n```{fence}\n{text}\n```"})
    return out


def run(name: str, items: Sequence[Dict[str, str]]) -> Dict[str, object]:
    """The gateway end to end (egress guard on) on each item: refused, words kept, what was masked most."""
    os.environ.setdefault("CEP_SECRET_KEY", "ab" * 32)
    from cloud_edge_privacy import Gateway
    from cloud_edge_privacy.errors import PrivacyGatewayError

    gw = Gateway("pseudonym", detector=name)
    gw.protect("Warm-up: Ms Anna Berg wrote to mr john smith in Oslo.")
    stats: Dict[str, Counter] = {k: Counter() for k in list(KINDS) + ["all"]}
    masked: Counter = Counter()
    lat: List[float] = []
    for it in items:
        words = _WORD.findall(it["snippet"])
        t0 = time.perf_counter()
        try:
            out = gw.protect(it["prompt"])
        except PrivacyGatewayError:
            lat.append((time.perf_counter() - t0) * 1e3)
            for g in (it["kind"], "all"):
                stats[g].update(prompts=1, refused=1, words=len(words))
            continue
        lat.append((time.perf_counter() - t0) * 1e3)
        left = set(_WORD.findall(out.text))
        kept = sum(1 for w in words if w in left)
        masked.update(w for w in words if w not in left)
        for g in (it["kind"], "all"):
            stats[g].update(prompts=1, words=len(words), kept=kept, repaired=bool(out.repairs))
    lat.sort()
    return {"stats": stats, "masked": masked, "p50_ms": round(lat[len(lat) // 2], 1) if lat else None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=150)
    ap.add_argument("--seed", type=int, default=49)
    ap.add_argument("--detectors", default="default,presidio")
    ap.add_argument("--split", default="test", choices=tuple(SPLITS),
                    help="whose files: 'dev' packages (rules are developed on them) or 'test' packages (reported)")
    ap.add_argument("--list", action="store_true", help="print the files and lines drawn, then stop")
    ap.add_argument("--show-masked", type=int, default=25, help="print this many of the most often masked words")
    args = ap.parse_args()
    items = draw(args.n, args.seed, args.split)
    if args.list:
        for it in items:
            print(it["kind"], it["file"])
        return
    counts = Counter(it["kind"] for it in items)
    print(f"{len(items)} snippets of the {args.split} packages' files ({', '.join(f'{k} {v}' for k, v in counts.items())}), "
          f"seed {args.seed}; every word non-private\n")
    print("| detector | refused | words kept | code | config | markup | prompts repaired | p50 ms |")
    print("|---|---|---|---|---|---|---|---|")
    results = {}
    for name in [d for d in args.detectors.split(",") if d]:
        r = results[name] = run(name, items)
        st = r["stats"]

        def kept(g: str) -> str:
            return f"{st[g]['kept'] / st[g]['words']:.3f}" if st[g]["words"] else "-"

        a = st["all"]
        print(f"| {name} | {a['refused'] / a['prompts']:.3f} ({a['refused']}/{a['prompts']}) | {kept('all')} "
              f"| {kept('code')} | {kept('config')} | {kept('markup')} | {a['repaired']} | {r['p50_ms']} |")
    for name, r in results.items():
        print(f"\n[{name}] most often masked: " + ", ".join(f"{w} {c}" for w, c in r["masked"].most_common(args.show_masked)))


if __name__ == "__main__":
    main()
