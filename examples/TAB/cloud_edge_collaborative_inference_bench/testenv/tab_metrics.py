"""Ianvs testenv metrics of the TAB example.

Every metric declared in ``cloud_edge_privacy.metrics.catalog`` is registered under its name and called by
Ianvs as ``f(y_true, y_pred)`` over all samples of a test case; testenv.yaml selects which ones run.  Each
call also records the test case (predictions, metric values, machine load) in its folder under the
workspace, so that ``visualization_tools.py`` writes the full report under Ianvs too.
"""
import os
from pathlib import Path

from cloud_edge_privacy.bench.case_record import recording
from cloud_edge_privacy.metrics.catalog import register_metrics

# The public background knowledge of the TRIR re-identification attack (iar_trir, trir_original) ships in
# this example's data/; an explicit $TAB_BACKGROUND_KNOWLEDGE still wins.
EXAMPLE_BACKGROUND = Path(__file__).resolve().parent.parent / "data" / "background_knowledge.json"


def use_example_background() -> None:
    """Point TRIR at the example's background knowledge unless the environment names another file."""
    if EXAMPLE_BACKGROUND.is_file():
        os.environ.setdefault("TAB_BACKGROUND_KNOWLEDGE", str(EXAMPLE_BACKGROUND))


use_example_background()
register_metrics(wrap=recording)
