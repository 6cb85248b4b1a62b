"""Ianvs cloudmodel for the time-series example: a thin adapter over the edge-side release (library
code)."""
from cloud_edge_privacy.registry import ClassFactory, ClassType
from cloud_edge_privacy.timeseries.ianvs_modules import TimeSeriesCloudModel


@ClassFactory.register(ClassType.GENERAL, alias="TsPrivacyCloudModel")
class TsPrivacyCloudModel(TimeSeriesCloudModel):
    """Releases the series with the configured method and sends only the released values."""
