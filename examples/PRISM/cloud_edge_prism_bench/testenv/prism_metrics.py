"""Ianvs testenv metrics of the PRISM example: every metric declared in
cloud_edge_privacy.metrics.catalog (PRISM's completion time, edge energy, judge and route shares
among them), each called as f(y_true, y_pred) over one test case; testenv.yaml selects which ones
run."""
from cloud_edge_privacy.metrics.catalog import register_metrics

register_metrics()
