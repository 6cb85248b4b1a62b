"""Write report.md, rank/leaderboard.csv, leaderboard.html and the plots of a finished job.

Ianvs itself only prints selected_rank.csv.  Run from the Ianvs root after ``ianvs -f`` on
the same file:

    python examples/TAB/cloud_edge_collaborative_inference_bench/testenv/visualization_tools.py \\
        examples/TAB/cloud_edge_collaborative_inference_bench/benchmarkingjob.yaml

The report reads the job's rank files and what the metrics recorded in each test case's folder.
"""
import argparse
from pathlib import Path

from cloud_edge_privacy.bench.ianvs_config import load_benchmarking_job
from cloud_edge_privacy.metrics.trir import use_background_unless_set
from cloud_edge_privacy.reporting.report import write_report

EXAMPLE = Path(__file__).resolve().parents[1]
DEFAULT_JOB = "examples/TAB/cloud_edge_collaborative_inference_bench/benchmarkingjob.yaml"


def main() -> None:
    """Parse the arguments and write the report of the job."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("job", nargs="?", default=DEFAULT_JOB,
                        help="the benchmarkingjob YAML that was run (default: %(default)s)")
    parser.add_argument("--no-judge", action="store_true",
                        help="skip the LLM-judge half of APR (one local-model call per answer)")
    args = parser.parse_args()
    # the same TRIR background knowledge as the metrics (testenv/tab_metrics.py)
    use_background_unless_set(EXAMPLE / "data" / "background_knowledge.json")
    job = load_benchmarking_job(args.job)
    print(write_report(job.output_dir, args.job, job.testenv.test_data,
                       judge=not args.no_judge))


if __name__ == "__main__":
    main()
