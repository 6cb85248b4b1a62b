import pytest

from cloud_edge_privacy.registry import _LocalClassFactory, _LocalClassType


def test_register_and_get():
    @_LocalClassFactory.register(_LocalClassType.GENERAL, alias="test_reg_a")
    class A:
        pass

    assert _LocalClassFactory.get_cls(_LocalClassType.GENERAL, "test_reg_a") is A
    assert _LocalClassFactory.is_exists(_LocalClassType.GENERAL, "test_reg_a")


def test_second_different_class_under_same_alias_is_refused():
    @_LocalClassFactory.register(_LocalClassType.HEM, alias="test_reg_b")
    class B:
        pass

    with pytest.raises(ValueError, match="already registered"):
        @_LocalClassFactory.register(_LocalClassType.HEM, alias="test_reg_b")
        class Other:
            pass


def test_missing_alias_lists_known_ones():
    with pytest.raises(ValueError, match="can't find class type general class name nope"):
        _LocalClassFactory.get_cls(_LocalClassType.GENERAL, "nope")


def test_example_module_files_register_expected_aliases(in_repo):
    from cloud_edge_privacy.bench.module_loader import import_module_file
    from cloud_edge_privacy.registry import ClassFactory, ClassType
    from conftest import EXAMPLE

    for rel in ["testalgorithms/edge_model/tab_edge_model.py", "testalgorithms/cloud_model/tab_cloud_model.py",
                "testalgorithms/hard_sample_mining/tab_hard_sample_mining.py",
                "testalgorithms/privacy_desensitization/tab_privacy_desensitization.py",
                "testenv/tab_metrics.py"]:
        import_module_file(str(EXAMPLE / rel))
    for alias in ["TabLlamaEdgeModel", "TabPrivacyCloudModel", "pdr", "sels",
                  "leak_direct", "er_di", "er_qi", "token_precision", "edge_ratio", "latency_mean_ms"]:
        assert ClassFactory.get_cls(ClassType.GENERAL, alias)
    assert ClassFactory.get_cls(ClassType.HEM, "TabEdgeConfidenceRouter")


def test_module_basenames_are_unique(in_repo):
    from conftest import EXAMPLE

    names = [p.name for p in EXAMPLE.rglob("*.py")]
    assert len(names) == len(set(names)), names
