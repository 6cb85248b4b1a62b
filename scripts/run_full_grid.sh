#!/usr/bin/env bash
# The full grid on TAB dev (every privacy method; epsilon 0.5-8 for the methods with a budget; both mining
# modes: 2 x 26 test cases), then copies each job's leaderboard, report and plots into the example's
# results/ folder.  Long: about 1.5 h on 2 cores with empty caches.  Extra arguments go to `run`
# (e.g. --data-dir DIR, --limit N).
set -euo pipefail
cd "$(dirname "$0")/.."
E=examples/TAB/cloud_edge_collaborative_inference_bench
for job in benchmarkingjob_full.yaml benchmarkingjob_full_itm.yaml; do
  name=$(.venv/bin/python -c "import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))['benchmarkingjob']['name'])" "$E/$job")
  .venv/bin/cloud-edge-privacy run -f "$E/$job" "$@"
  out="$E/results/$name"
  rm -rf "$out" && mkdir -p "$out"
  cp workspace/"$name"/rank/*.csv workspace/"$name"/report.md "$out"/
  cp workspace/"$name"/*.png "$out"/ 2>/dev/null || true
done
echo "results in $E/results/"
