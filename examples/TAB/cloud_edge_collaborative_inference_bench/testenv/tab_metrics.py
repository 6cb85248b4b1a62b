"""Ianvs testenv metrics of the TAB example: every metric declared in cloud_edge_privacy.metrics.catalog,
each called as f(y_true, y_pred) over all samples of a test case; testenv.yaml selects which ones run."""
from cloud_edge_privacy.metrics.catalog import register_metrics

register_metrics()
