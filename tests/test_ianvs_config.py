import textwrap
import warnings

import pytest

from cloud_edge_privacy.errors import ConfigError
from cloud_edge_privacy.bench.ianvs_config import load_algorithm, load_benchmarking_job, load_testenv


def _w(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return str(p)


ALGO = """
algorithm:
  paradigm_type: "jointinference"
  modules:
    - type: "edgemodel"
      name: "E"
      url: "e.py"
      hyperparameters:
        - a: {values: [1, 2]}
    - type: "cloudmodel"
      name: "C"
      url: "c.py"
      hyperparameters:
        - m: {values: ["x", "y", "z"]}
        - k: {values: [0.5]}
    - type: "hard_example_mining"
      name: "H"
"""


def test_grid_is_cartesian_product_in_yaml_order(tmp_path):
    variants = load_algorithm("alg", _w(tmp_path, "a.yaml", ALGO))
    assert len(variants) == 6  # 2 edge values x 3 cloud values
    cols = [v.hyperparameter_columns() for v in variants]
    assert cols[0] == {"edgemodel-a": "1", "cloudmodel-m": "x", "cloudmodel-k": "0.5"}
    assert [c["cloudmodel-m"] for c in cols] == ["x", "y", "z", "x", "y", "z"]   # last module varies fastest
    assert [c["edgemodel-a"] for c in cols] == ["1"] * 3 + ["2"] * 3


@pytest.mark.parametrize("bad, msg", [
    ('- a: {values: "abc"}', "must be a non-empty list"),
    ("- a: {values: 0.5}", "must be a non-empty list"),
    ("- {a: {values: [1]}, b: {values: [2]}}", "has several keys"),
])
def test_hyperparameter_traps_are_errors(tmp_path, bad, msg):
    text = ALGO.replace("- a: {values: [1, 2]}", bad)
    with pytest.raises(ConfigError, match=msg):
        load_algorithm("alg", _w(tmp_path, "a.yaml", text))


def test_two_modules_of_one_type_and_missing_type_are_errors(tmp_path):
    dup = ALGO + '    - type: "hard_example_mining"\n      name: "H2"\n'
    with pytest.raises(ConfigError, match="two modules of type 'hard_example_mining'"):
        load_algorithm("alg", _w(tmp_path, "a.yaml", dup))
    missing = ALGO.split('    - type: "hard_example_mining"')[0]
    with pytest.raises(ConfigError, match="needs a module of type 'hard_example_mining'"):
        load_algorithm("alg", _w(tmp_path, "b.yaml", missing))


def test_unknown_keys_warn_like_ianvs_drops_them(tmp_path):
    text = ALGO.replace('paradigm_type: "jointinference"', 'paradigm_type: "jointinference"\n  model_path: "x"')
    with pytest.warns(UserWarning, match="'model_path' in algorithm is not read by Ianvs"):
        load_algorithm("alg", _w(tmp_path, "a.yaml", text))


def test_invalid_yaml_names_file(tmp_path):
    p = _w(tmp_path, "bad.yaml", "algorithm: [unclosed\n")
    with pytest.raises(ConfigError, match=r"bad.yaml: invalid YAML"):
        load_algorithm("alg", p)


def test_testenv_mining_mode_and_train_data(tmp_path):
    env = load_testenv(_w(tmp_path, "t.yaml", """
        testenv:
          hard_example_mining_mode: "inference-then-mining"
          dataset: {train_data: "a.jsonl", test_data: "b.jsonl"}
          metrics: [{name: "pdr", url: "m.py"}]
    """))
    assert env.mining_mode == "inference-then-mining" and env.test_data == "b.jsonl"
    with pytest.raises(ConfigError, match="train_data"):
        load_testenv(_w(tmp_path, "u.yaml", """
            testenv:
              dataset: {test_data: "b.jsonl"}
              metrics: [{name: "pdr"}]
        """))


def _job(tmp_path, rank_extra=""):
    _w(tmp_path, "a.yaml", ALGO)
    _w(tmp_path, "t.yaml", """
        testenv:
          dataset: {train_data: "a.jsonl", test_data: "b.jsonl"}
          metrics: [{name: "pdr", url: "m.py"}, {name: "sels", url: "m.py"}]
    """)
    return _w(tmp_path, "job.yaml", f"""
        benchmarkingjob:
          name: "j"
          workspace: "{tmp_path}/ws"
          testenv: "{tmp_path}/t.yaml"
          test_object:
            type: "algorithms"
            algorithms:
              - {{name: "alg", url: "{tmp_path}/a.yaml"}}
          rank:
            sort_by: [{{pdr: "descend"}}{rank_extra}]
            selected_dataitem: {{paradigms: ["all"], modules: ["all"], hyperparameters: ["all"], metrics: ["all"]}}
    """)


def test_job_loads_and_expands(tmp_path):
    job = load_benchmarking_job(_job(tmp_path))
    assert job.name == "j" and len(job.algorithms) == 6
    assert job.testenv.mining_mode == "mining-then-inference"   # Ianvs's default when absent


def test_sort_by_must_name_metrics(tmp_path):
    with pytest.raises(ConfigError, match="'privacy_score', which is not a metric"):
        load_benchmarking_job(_job(tmp_path, ', {privacy_score: "ascend"}'))


def test_selected_dataitem_must_be_complete(tmp_path):
    path = _job(tmp_path)
    text = open(path).read().replace(' hyperparameters: ["all"],', "")
    open(path, "w").write(text)
    with pytest.raises(ConfigError, match=r"missing \['hyperparameters'\]"):
        load_benchmarking_job(path)


def test_shipped_example_config_is_valid(in_repo):
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # every key is one Ianvs reads
        job = load_benchmarking_job("examples/TAB/cloud_edge_collaborative_inference_bench/benchmarkingjob.yaml")
    assert len(job.algorithms) == 3
    metric_names = {m["name"] for m in job.testenv.metrics}
    assert set(job.rank["selected_dataitem"]["metrics"]) <= metric_names


@pytest.mark.parametrize("job, mode", [("benchmarkingjob_full.yaml", "mining-then-inference"),
                                       ("benchmarkingjob_full_itm.yaml", "inference-then-mining")])
def test_full_grid_crosses_epsilon_only_with_the_methods_that_take_it(in_repo, job, mode):
    from cloud_edge_privacy.core.gateway import budgeted_methods

    j = load_benchmarking_job(f"examples/TAB/cloud_edge_collaborative_inference_bench/{job}")
    assert j.testenv.mining_mode == mode
    cases = [(a.name, a.modules["cloudmodel"].hyperparameters) for a in j.algorithms]
    assert len(cases) == 26
    masking = sorted(hp["privacy_method"] for name, hp in cases if name == "masking")
    assert masking == sorted(["none", "suppression", "placeholder", "pseudonym", "generalization", "adaptive"])
    assert all("epsilon" not in hp for name, hp in cases if name == "masking")
    dp = {(hp["privacy_method"], hp["epsilon"]) for name, hp in cases if name == "dp"}
    dp_methods = {m for m, _ in dp}
    assert dp_methods <= set(budgeted_methods())
    assert dp == {(m, e) for m in dp_methods for e in (0.5, 1, 2, 4, 8)}
    assert dp_methods == {"dp_numbers", "metric_dp_words", "prism_ldp", "uniform_ldp"}
