"""Ianvs metrics for the time-series example (definitions in cloud_edge_privacy.timeseries.ianvs_modules)."""
from cloud_edge_privacy.registry import ClassFactory, ClassType
from cloud_edge_privacy.timeseries import ianvs_modules as m

ClassFactory.register(ClassType.GENERAL, alias="ts_sts_cloud")(m.sts_cloud)
ClassFactory.register(ClassType.GENERAL, alias="ts_sts_edge")(m.sts_edge)
ClassFactory.register(ClassType.GENERAL, alias="ts_numeric_error_cloud")(m.numeric_error_cloud)
ClassFactory.register(ClassType.GENERAL, alias="ts_attack_event_success")(m.attack_event_success)
ClassFactory.register(ClassType.GENERAL, alias="ts_epsilon_series")(m.epsilon_series)
ClassFactory.register(ClassType.GENERAL, alias="ts_cloud_share")(m.cloud_share)
