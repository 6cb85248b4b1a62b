"""Write report.md, rank/leaderboard.csv, leaderboard.html and the plots of a finished job.

Ianvs itself only prints selected_rank.csv.  Run from the Ianvs root after ``ianvs -f`` on the same file:

    python examples/TAB/cloud_edge_collaborative_inference_bench/testenv/visualization_tools.py \\
        examples/TAB/cloud_edge_collaborative_inference_bench/benchmarkingjob.yaml

The report reads the job's rank files and what the metrics recorded in each test case's folder.
"""
import argparse

from cloud_edge_privacy.bench.ianvs_config import load_benchmarking_job
from cloud_edge_privacy.reporting.report import write_report

from tab_metrics import use_example_background

DEFAULT_JOB = "examples/TAB/cloud_edge_collaborative_inference_bench/benchmarkingjob.yaml"


def main() -> None:
    """Parse the arguments and write the report of the job."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("job", nargs="?", default=DEFAULT_JOB,
                        help="the benchmarkingjob YAML that was run (default: %(default)s)")
    parser.add_argument("--no-judge", action="store_true",
                        help="skip the LLM-judge half of APR (one local-model call per cloud answer)")
    args = parser.parse_args()
    use_example_background()
    job = load_benchmarking_job(args.job)
    print(write_report(job.output_dir, args.job, job.testenv.test_data, judge=not args.no_judge))


if __name__ == "__main__":
    main()
