"""Configuration typos and bad ε are refused before any model loads, naming the YAML file and the key."""

import pytest

from conftest import EXAMPLE

ALGO = EXAMPLE / "testalgorithms" / "test_algorithms.yaml"


def _job(tmp_path, replace):
    """A copy of the default job whose algorithm YAML has one edit."""
    text = ALGO.read_text()
    for old, new in replace:
        assert old in text, old
        text = text.replace(old, new)
    algo = tmp_path / "algo.yaml"
    algo.write_text(text)
    job = (EXAMPLE / "benchmarkingjob.yaml").read_text().replace(
        "./examples/TAB/cloud_edge_collaborative_inference_bench/testalgorithms/test_algorithms.yaml", str(algo))
    path = tmp_path / "job.yaml"
    path.write_text(job.replace('workspace: "./workspace"', f'workspace: "{tmp_path / "ws"}"'))
    return path, algo


CASES = [
    ("epsilom", [("- seed: {values: [42]}\n        # Names", "- epsilom: {values: [2]}\n        # Names")],
     "unknown hyperparameter 'epsilom' (did you mean 'epsilon'?)"),
    ("privacy_methd", [('- privacy_method: {values: ["none", "suppression", "placeholder"]}',
                        '- privacy_methd: {values: ["suppression"]}')], "unknown hyperparameter 'privacy_methd'"),
    ("max_edge_wrds", [("- max_edge_words: {values: [80]}", "- max_edge_wrds: {values: [80]}")],
     "unknown hyperparameter 'max_edge_wrds' (did you mean 'max_edge_words'?)"),
    ("eps_inf", [('- privacy_method: {values: ["none", "suppression", "placeholder"]}',
                  '- privacy_method: {values: ["dp_numbers"]}\n        - epsilon: {values: [.inf]}')],
     "epsilon must be a finite number > 0"),
    ("eps_zero", [('- privacy_method: {values: ["none", "suppression", "placeholder"]}',
                   '- privacy_method: {values: ["dp_numbers"]}\n        - epsilon: {values: [0]}')],
     "epsilon must be a finite number > 0"),
    ("eps_negative", [('- privacy_method: {values: ["none", "suppression", "placeholder"]}',
                       '- privacy_method: {values: ["dp_numbers"]}\n        - epsilon: {values: [-1]}')],
     "epsilon must be a finite number > 0"),
    ("eps_without_budget", [('- privacy_method: {values: ["none", "suppression", "placeholder"]}',
                             '- privacy_method: {values: ["suppression"]}\n        - epsilon: {values: [1]}')],
     "has no privacy budget"),
    ("secret_in_env_name", [('- api_key_env: {values: ["CEP_CLOUD_API_KEY"]}',
                             '- api_key_env: {values: ["sk-live-abc123"]}')], "NAME of an environment variable"),
]


@pytest.mark.parametrize("name,replace,message", CASES, ids=[c[0] for c in CASES])
def test_bad_hyperparameters_are_refused_before_any_model_loads(name, replace, message, tmp_path, in_repo,
                                                                 capsys, monkeypatch):
    from cloud_edge_privacy import cli
    from cloud_edge_privacy.models import llama_edge

    def no_model(*a, **k):
        raise AssertionError("a model was loaded before the configuration was validated")

    monkeypatch.setattr(llama_edge, "load_llama", no_model)
    job, algo = _job(tmp_path, replace)
    assert cli.main(["run", "-f", str(job), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert str(algo) in err and message in err, err
    assert not (tmp_path / "ws").exists() or not any((tmp_path / "ws").rglob("predictions.jsonl"))


@pytest.mark.parametrize("eps", ["inf", "0", "-1", "nan"])
def test_anonymize_refuses_bad_epsilon(eps, capsys):
    from cloud_edge_privacy import cli

    assert cli.main(["anonymize", "--input", "x.json", "--method", "dp_numbers", "--epsilon", eps,
                     "--masks-out", "m.json"]) == 2
    assert "epsilon must be a finite number > 0" in capsys.readouterr().err


def test_adaptive_takes_an_epsilon():
    from cloud_edge_privacy.core.module_configs import CloudModelConfig

    assert CloudModelConfig(privacy_method="adaptive", epsilon=1.0).operator_params()["epsilon"] == 1.0


# --- issue 19 item 7: silent configuration -------------------------------------------------------------------

ENV = EXAMPLE / "testenv" / "testenv.yaml"


def _job_with_env(tmp_path, env_replace=(), job_replace=()):
    """A copy of the default job with edits to its testenv YAML and to the job YAML itself."""
    env = ENV.read_text()
    for old, new in env_replace:
        assert old in env, old
        env = env.replace(old, new)
    env_path = tmp_path / "env.yaml"
    env_path.write_text(env)
    job = (EXAMPLE / "benchmarkingjob.yaml").read_text().replace(
        "./examples/TAB/cloud_edge_collaborative_inference_bench/testenv/testenv.yaml", str(env_path))
    job = job.replace('workspace: "./workspace"', f'workspace: "{tmp_path / "ws"}"')
    for old, new in job_replace:
        assert old in job, old
        job = job.replace(old, new)
    path = tmp_path / "job.yaml"
    path.write_text(job)
    return path, env_path


def _refused_fast(args, monkeypatch, capsys):
    """The CLI exits 2 before any LLM loads (a load would raise); returns stderr."""
    from cloud_edge_privacy import cli
    from cloud_edge_privacy.models import llama_edge

    def no_model(*a, **k):
        raise AssertionError("a model was loaded before the configuration was validated")

    monkeypatch.setattr(llama_edge, "load_llama", no_model)
    assert cli.main(args) == 2
    return capsys.readouterr().err


SILENT = [
    ("testenv_key_typo", [('hard_example_mining_mode: "mining-then-inference"', 'hard_example_mining_mod: "mining-then-inference"')], [],
     "env", "unknown key 'hard_example_mining_mod' in testenv (did you mean 'hard_example_mining_mode'?)"),
    ("dataset_key_typo", [("    test_data: ", "    tset_data: ")], [],
     "env", "unknown key 'tset_data' in testenv.dataset (did you mean 'test_data'?)"),
    ("job_key_typo", [], [('workspace: "', 'workspce: "')],
     "job", "unknown key 'workspce' in benchmarkingjob (did you mean 'workspace'?)"),
    ("rank_key_typo", [], [("    sort_by:", "    sortby:")],
     "job", "unknown key 'sortby' in rank (did you mean 'sort_by'?)"),
    ("sort_direction_typo", [], [('- sels: "ascend"', '- sels: "ascending"')],
     "job", "direction must be 'ascend' or 'descend'"),
    ("unknown_metric", [('- name: "token_recall"', '- name: "token_recal"')], [],
     "env", "no metric named 'token_recal' is registered"),
    ("missing_data", [("/data/tab_sample.jsonl\"\n  metrics", "/data/missing.jsonl\"\n  metrics")], [],
     "env", "missing.jsonl not found"),
]


@pytest.mark.parametrize("name,env_replace,job_replace,where,message", SILENT, ids=[c[0] for c in SILENT])
def test_silent_configuration_is_refused_at_once(name, env_replace, job_replace, where, message, tmp_path, in_repo,
                                                 capsys, monkeypatch):
    job, env = _job_with_env(tmp_path, env_replace, job_replace)
    err = _refused_fast(["run", "-f", str(job), "--no-progress", "--sample"], monkeypatch, capsys)
    assert message in err and str(job if where == "job" else env) in err, err
    assert not (tmp_path / "ws").exists()  # nothing was written: no workspace, no lock, no INCOMPLETE marker


def test_deeply_nested_json_in_the_test_data_is_a_clear_error(tmp_path, in_repo, capsys, monkeypatch):
    deep = tmp_path / "deep.jsonl"
    deep.write_text('{"question": {"doc_id": "a", "text": "x"}, "answer": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    job, _ = _job_with_env(tmp_path)
    err = _refused_fast(["run", "-f", str(job), "--no-progress", "--test-data", str(deep)], monkeypatch, capsys)
    assert str(deep) in err and "nested too deeply" in err and "Traceback" not in err
