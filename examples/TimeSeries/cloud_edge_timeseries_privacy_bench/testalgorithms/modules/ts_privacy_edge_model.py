"""Ianvs edgemodel for the time-series example: registers the library class (logic in cloud_edge_privacy.timeseries)."""
import os

os.environ.setdefault("BACKEND_TYPE", "NONE")  # pure-Python module: Sedna's generic backend

from cloud_edge_privacy.registry import ClassFactory, ClassType
from cloud_edge_privacy.timeseries.ianvs_modules import TimeSeriesEdgeModel


@ClassFactory.register(ClassType.GENERAL, alias="TsPrivacyEdgeModel")
class TsPrivacyEdgeModel(TimeSeriesEdgeModel):
    """The edge LLM answers with the original series; nothing leaves."""
