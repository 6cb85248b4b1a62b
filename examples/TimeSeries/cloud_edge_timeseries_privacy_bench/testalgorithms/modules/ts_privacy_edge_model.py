"""Ianvs edgemodel for the time-series example: registers the library class (logic in
cloud_edge_privacy.timeseries)."""
import os

from cloud_edge_privacy.registry import ClassFactory, ClassType
from cloud_edge_privacy.timeseries.ianvs_modules import TimeSeriesEdgeModel

os.environ.setdefault("BACKEND_TYPE", "NONE")  # pure-Python module: Sedna's generic backend


@ClassFactory.register(ClassType.GENERAL, alias="TsPrivacyEdgeModel")
class TsPrivacyEdgeModel(TimeSeriesEdgeModel):
    """The edge LLM answers with the original series; nothing leaves."""
