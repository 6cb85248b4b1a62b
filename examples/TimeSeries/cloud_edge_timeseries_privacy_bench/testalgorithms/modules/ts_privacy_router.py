"""Ianvs hard_example_mining module for the time-series example (a fixed route)."""
# A Sedna router is a callable (its interface is __call__), not a class with public methods.
# pylint: disable=too-few-public-methods
from cloud_edge_privacy.registry import ClassFactory, ClassType
from cloud_edge_privacy.timeseries.ianvs_modules import TimeSeriesRouter


@ClassFactory.register(ClassType.HEM, alias="TsPrivacyRouter")
class TsPrivacyRouter(TimeSeriesRouter):
    """Every sample takes the cloud route; the edge decides what leaves."""
