"""Docs that cannot drift: every command block in README.md, docs/ and the example READMEs is checked or run.

A fenced block is a command block when its language is bash/sh/shell/python, or it has none and its first
command starts like one.  The HTML comment on the line before the fence says what the test does with it:

* ``<!-- docs-test: run -->``: executed from the repository root (bash with ``set -euo pipefail``, python
  blocks with the venv's interpreter); it must exit 0.  Run blocks write only under ``workspace/`` or ``/tmp``.
* no comment, or ``<!-- docs-test: check -->``: every command is checked without running it (a python block
  must compile): it must be
  callable after ``scripts/setup.sh`` (``.venv/bin/...``, ``bash scripts/...``, a shell builtin), a
  ``cloud-edge-privacy`` command must parse with the real CLI parser, a script or module must exist, and the
  files it reads (``-f``, ``--input``, ``--gold``, ``--data``, ...) must exist.
* ``<!-- docs-test: skip: REASON -->``: not checked (a GPU, a remote upstream, another checkout, hours of
  CPU); the reason is required.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional

import pytest

REPO = Path(__file__).resolve().parents[1]
VENV_BIN = REPO / ".venv" / "bin"
MARKER = re.compile(r"<!--\s*docs-test:\s*(run|check|skip)\s*(?::\s*(.*?))?\s*-->")
FENCE = re.compile(r"^(\s*)```(\w*)\s*$")
COMMAND_START = (".venv/bin/", "bash ", "python", "cloud-edge-privacy", "pip ", "ianvs", "export ")
# commands a shell has without the project: builtins and the base system's tools
SYSTEM = {"export", "cd", "echo", "cat", "ls", "mkdir", "cp", "rm", "sha256sum", "curl", "git", "tail", "head",
          "test", "true", "set", "unset", "source", "wait", "kill", "sleep", "mktemp", "diff", "tar", "bash",
          "sh", "python3", "python3.11", "du", "date", "time", "grep", "sed", "jq", "apt-get"}
# options whose value is a file or folder the command reads (outputs are not checked)
INPUT_OPTIONS = {"-f", "--config", "--input", "--gold", "--data", "--data-dir", "--test-data", "--masks",
                 "--teacher-labels", "--train", "--dev"}


def doc_files() -> List[Path]:
    files = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")),
             *sorted((REPO / "examples").glob("*/*/README.md"))]
    return [f for f in files if f.is_file()]


@dataclass
class Block:
    path: Path
    line: int           # 1-based line of the opening fence
    lang: str
    body: str
    mode: str           # run | check | skip
    reason: str

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"


def blocks(path: Path) -> List[Block]:
    lines = path.read_text(encoding="utf-8").split("\n")
    out: List[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, lang = i, m.group(2).lower()
        j = i + 1
        while j < len(lines) and not re.match(r"^\s*```\s*$", lines[j]):
            j += 1
        body = "\n".join(ln[len(m.group(1)):] if ln.startswith(m.group(1)) else ln for ln in lines[i + 1:j])
        prev = next((lines[k] for k in range(start - 1, -1, -1) if lines[k].strip()), "")
        mk = MARKER.search(prev)
        mode, reason = (mk.group(1), mk.group(2) or "") if mk else ("check", "")
        first = next((ln.strip() for ln in body.split("\n") if ln.strip() and not ln.strip().startswith("#")), "")
        is_command = lang in ("bash", "sh", "shell", "python") or (lang == "" and first.startswith(COMMAND_START))
        if is_command:
            out.append(Block(path, start + 1, lang or "bash", body, mode, reason))
        i = j + 1
    return out


ALL = [b for f in doc_files() for b in blocks(f)]


def commands(body: str) -> List[str]:
    """Logical shell commands: continuation lines joined, comments and blank lines dropped."""
    out, cur = [], ""
    for raw in body.split("\n"):
        line = raw.rstrip()
        if not cur and (not line.strip() or line.strip().startswith("#")):
            continue
        if line.endswith("\\"):
            cur += line[:-1] + " "
            continue
        out.append((cur + line).strip())
        cur = ""
    if cur.strip():
        out.append(cur.strip())
    return out


SEPARATORS = {"&&", "||", ";", "|", "&", "(", ")", ";;", "$"}


def simple_commands(cmd: str) -> List[List[str]]:
    """The simple commands of a shell line (quote-aware; comments, operators, redirections and subshell
    parentheses removed)."""
    lex = shlex.shlex(cmd, posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    out: List[List[str]] = [[]]
    skip_next = False
    for tok in lex:
        if skip_next:
            skip_next = False
        elif tok in SEPARATORS:
            out.append([])
        elif tok in (">", ">>", "<", "2>", "2>&1"):
            skip_next = tok != "2>&1"
        else:
            out[-1].append(tok)
    return [c for c in out if c]


def check_command(cmd: str) -> Optional[str]:
    """None when the command is callable after setup and reads only files that exist; else the problem."""
    try:
        parts = simple_commands(cmd)
    except ValueError as exc:
        return f"cannot parse: {exc}"
    for argv in parts:
        while argv and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", argv[0]):   # VAR=value prefixes
            argv = argv[1:]
        if not argv:
            continue
        prog, args = argv[0], argv[1:]
        if prog in SYSTEM:
            if prog == "bash" and args and not (REPO / args[0]).is_file():
                return f"{args[0]}: no such script"
            continue
        if prog.startswith(".venv/bin/"):
            name = prog[len(".venv/bin/"):]
            if VENV_BIN.is_dir() and not (VENV_BIN / name).exists():
                return f"{prog}: not installed by scripts/setup.sh"
            problem = _check_program(name, args)
            if problem:
                return problem
            continue
        return f"{prog!r} is not on PATH after scripts/setup.sh: write .venv/bin/{prog} (or mark the block)"
    return None


def _check_program(name: str, args: List[str]) -> Optional[str]:
    if name == "cloud-edge-privacy":
        from cloud_edge_privacy.cli import build_parser

        try:
            build_parser().parse_args(args)
        except SystemExit as exc:
            if exc.code not in (0, None):
                return f"cloud-edge-privacy {' '.join(args)}: the CLI refuses these arguments"
    elif name == "python" and args:
        if args[0] == "-m":
            import importlib.util

            if importlib.util.find_spec(args[1]) is None:
                return f"python -m {args[1]}: no such module"
        elif args[0] == "-c" or args[0] == "-":
            pass
        elif not (REPO / args[0]).is_file():
            return f"{args[0]}: no such script"
    for opt, value in zip(args, args[1:]):
        # inputs must exist; workspace/ and /tmp hold what earlier commands of the block write
        if opt in INPUT_OPTIONS and not re.search(r"[<>*$]", value) and not value.startswith(("/tmp", "workspace/")):
            if not (REPO / value).exists():
                return f"{opt} {value}: no such file in the repository"
    return None


@pytest.mark.parametrize("block", [b for b in ALL if b.mode == "check"], ids=lambda b: b.where)
def test_documented_commands_are_callable(block):
    if block.lang == "python":   # an API sketch: it must at least be valid Python
        compile(block.body, block.where, "exec")
        return
    problems = [f"{c[:100]}: {p}" for c in commands(block.body) if (p := check_command(c))]
    assert not problems, f"{block.where}:\n" + "\n".join(problems)


def test_skipped_blocks_state_a_reason():
    bad = [b.where for b in ALL if b.mode == "skip" and len(b.reason) < 10]
    assert not bad, f"docs-test: skip needs a reason: {bad}"


@pytest.mark.parametrize("block", [b for b in ALL if b.mode == "run"], ids=lambda b: b.where)
def test_documented_blocks_run(block, tmp_path):
    env = dict(os.environ, CEP_SECRET_KEY=os.environ.get("CEP_SECRET_KEY", "ab" * 32), PYTHONUNBUFFERED="1")
    if block.lang == "python":
        proc = subprocess.run([sys.executable, "-"], input=block.body, cwd=REPO, env=env, text=True,
                              capture_output=True, timeout=600)
    else:
        proc = subprocess.run(["bash", "-c", "set -euo pipefail\n" + block.body], cwd=REPO, env=env, text=True,
                              capture_output=True, timeout=600)
    assert proc.returncode == 0, f"{block.where} exited {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"


def test_the_mechanism_sees_the_documents():
    """The collector finds blocks in every document kind, and the checker catches what the issue saw."""
    assert {b.path.name for b in ALL} >= {"README.md"}
    assert len(ALL) >= 10
    assert "not on PATH" in check_command("cloud-edge-privacy proxy --upstream local")
    assert "no such file" in check_command(".venv/bin/cloud-edge-privacy score-tab --gold ../shared/x.json "
                                           "--masks m.json")
    assert "refuses" in check_command(".venv/bin/cloud-edge-privacy anonymize --method nonsense --text x")
    assert check_command(".venv/bin/cloud-edge-privacy anonymize --text 'x y' --method placeholder") is None
    assert check_command("export K=$(.venv/bin/python -c 'import a; print(1)')  # note") is None
    assert "not on PATH" in check_command("echo x | cloud-edge-privacy anonymize")
