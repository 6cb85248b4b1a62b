#!/usr/bin/env bash
# The full grid on TAB dev: every privacy method, both mining modes.  Long (about an hour on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
E=examples/TAB/cloud_edge_collaborative_inference_bench
for job in benchmarkingjob_full.yaml benchmarkingjob_full_itm.yaml; do
  .venv/bin/cloud-edge-privacy run -f "$E/$job" "$@"
done
