#!/usr/bin/env bash
# Write the TAB Ianvs example exactly as it is proposed to kubeedge/ianvs: one folder, self-contained.
#
#   scripts/export_ianvs_example.sh [--replace] DEST
#
# DEST becomes the example folder (in an Ianvs checkout: <ianvs>/examples/TAB/cloud_edge_collaborative_inference_bench;
# --replace removes an existing DEST first, as the upstream PR replaces the earlier example). It holds:
#   * the example's committed files at HEAD (YAMLs, module files, README, results/, data/);
#   * wheels/cloud_edge_privacy-<version>-py3-none-any.whl, built from the committed tree at HEAD
#     (requirements.txt installs the library from there, with its dependencies pinned);
#   * data/background_knowledge.json, the background knowledge of the TRIR attack: TAB's public judgments
#     (data/tab/ here) plus data/tab_sample_background.json (the fictional sample cases' judgments).
# Uncommitted changes are not exported (the export says so). Needs git and a Python with pip (PYTHON=...).
set -euo pipefail

usage() { echo "usage: $0 [--replace] DEST" >&2; exit 2; }
REPLACE=0
DEST=""
for arg in "$@"; do
  case "$arg" in
    --replace) REPLACE=1 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    -*) usage ;;
    *) [ -z "$DEST" ] || usage; DEST="$arg" ;;
  esac
done
[ -n "$DEST" ] || usage

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REL=examples/TAB/cloud_edge_collaborative_inference_bench
PYTHON=${PYTHON:-python3}

if [ -e "$DEST" ] && [ -n "$(ls -A "$DEST" 2>/dev/null)" ]; then
  if [ "$REPLACE" = 1 ]; then
    rm -rf "$DEST"
  else
    echo "$DEST exists and is not empty (pass --replace to replace it)" >&2
    exit 2
  fi
fi
if [ -n "$(git -C "$REPO" status --porcelain -- "$REL" src pyproject.toml data/tab/background_knowledge.json)" ]; then
  echo "note: uncommitted changes under $REL, src/ or pyproject.toml are not exported (HEAD is)" >&2
fi

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
git -C "$REPO" archive HEAD | tar -x -C "$TMP"
[ -d "$TMP/$REL" ] || { echo "$REL is not committed at HEAD" >&2; exit 1; }

mkdir -p "$DEST"
cp -a "$TMP/$REL/." "$DEST/"
rm -f "$DEST/wheels/.gitignore"
mkdir -p "$DEST/wheels"
"$PYTHON" -m pip wheel --quiet --no-deps -w "$DEST/wheels" "$TMP" >&2
# TRIR's background knowledge: TAB's public judgments plus the fictional judgments of the 3 sample cases
"$PYTHON" - "$TMP/data/tab/background_knowledge.json" "$DEST/data/tab_sample_background.json" \
  "$DEST/data/background_knowledge.json" <<'PY'
import json, sys
merged = {}
for path in sys.argv[1:3]:
    with open(path, encoding="utf-8") as fh:
        part = json.load(fh)
    clash = sorted(set(part) & set(merged))
    if clash:
        sys.exit(f"{path}: doc_ids already in the background knowledge: {clash[:3]}")
    merged.update(part)
with open(sys.argv[3], "w", encoding="utf-8") as fh:
    json.dump(merged, fh, ensure_ascii=False)
PY

echo "exported $(git -C "$REPO" rev-parse --short HEAD) to $DEST:" >&2
(cd "$DEST" && find . -type f | sort | sed 's|^\./|  |') >&2
