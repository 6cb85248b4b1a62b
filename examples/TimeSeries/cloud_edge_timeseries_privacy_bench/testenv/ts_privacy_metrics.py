"""Ianvs metrics for the time-series example: the "timeseries" family of
cloud_edge_privacy.metrics.catalog (definitions in cloud_edge_privacy.timeseries.ianvs_modules)."""
from cloud_edge_privacy.metrics.catalog import register_metrics

register_metrics("timeseries")
