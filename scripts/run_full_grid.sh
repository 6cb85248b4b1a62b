#!/usr/bin/env bash
# The full grid on TAB dev (every privacy method; epsilon 0.5-8 for the methods with a budget; both mining
# modes: 2 x 26 test cases), then copies each job's leaderboard, report and plots into the example's
# results/ folder.  Long: about 1.5 h on 2 cores with empty caches.  Extra arguments go to `run`
# (default: --data-dir ${TAB_DATA_DIR:-data/tab}; e.g. --limit N, --no-judge).  JOBS selects the
# jobs (default: both).
set -euo pipefail
cd "$(dirname "$0")/.."
E=examples/TAB/cloud_edge_collaborative_inference_bench
[ "$#" -gt 0 ] || set -- --data-dir "${TAB_DATA_DIR:-data/tab}"
for job in ${JOBS:-benchmarkingjob_full.yaml benchmarkingjob_full_itm.yaml}; do
  name=$(.venv/bin/python -c "import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))['benchmarkingjob']['name'])" "$E/$job")
  # exit code 1 = some samples failed (closed): the results are still written and say so
  .venv/bin/cloud-edge-privacy run -f "$E/$job" "$@" || [ "$?" -eq 1 ]
  out="$E/results/$name"
  rm -rf "$out" && mkdir -p "$out"
  cp workspace/"$name"/rank/*.csv workspace/"$name"/report.md "$out"/
  cp workspace/"$name"/*.png "$out"/ 2>/dev/null || true
  cp workspace/"$name"/rank/leaderboard.csv "$out"/ 2>/dev/null || true
done
echo "results in $E/results/"
