"""Ianvs testenv metrics of the template scenario: every metric declared in
cloud_edge_privacy.metrics.catalog; testenv.yaml selects which ones run."""
from cloud_edge_privacy.metrics.catalog import register_metrics

register_metrics()
