"""Write report.md for a finished job (Ianvs itself only prints selected_rank.csv).

Usage, from the repository root after ``ianvs -f .../benchmarkingjob.yaml``:
    python examples/TAB/cloud_edge_collaborative_inference_bench/testenv/visualization_tools.py \
        examples/TAB/cloud_edge_collaborative_inference_bench/benchmarkingjob.yaml
"""
import sys

from cloud_edge_privacy.bench.ianvs_config import load_benchmarking_job
from cloud_edge_privacy.reporting.report import write_report

if __name__ == "__main__":
    cfg = sys.argv[1] if len(sys.argv) > 1 else "examples/TAB/cloud_edge_collaborative_inference_bench/benchmarkingjob.yaml"
    job = load_benchmarking_job(cfg)
    print(write_report(job.output_dir, cfg, job.testenv.test_data))
