"""Ianvs testenv metrics of the TAB example.

Every metric of the library's catalog (``cloud_edge_privacy.metrics.catalog``) is registered under
its name; Ianvs calls each as ``f(y_true, y_pred)`` over all samples of a test case, and
testenv.yaml selects which ones run.  Each call also records the test case (answers, metric
values, machine load) in its folder under the workspace, so that ``visualization_tools.py``
writes the full report under Ianvs too.
"""
from pathlib import Path

from cloud_edge_privacy.bench.case_record import recording
from cloud_edge_privacy.metrics.catalog import register_metrics
from cloud_edge_privacy.metrics.trir import use_background_unless_set

# TRIR (iar_trir, trir_original) attacks with the background knowledge in this example's data/;
# $TAB_BACKGROUND_KNOWLEDGE names another file.
BACKGROUND = Path(__file__).resolve().parents[1] / "data" / "background_knowledge.json"
use_background_unless_set(BACKGROUND)
register_metrics(wrap=recording)
