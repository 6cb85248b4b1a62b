"""Read the three Ianvs YAML files exactly as Ianvs does (docs/ianvs-contract.md §1) and expand test cases.

Only keys that Ianvs reads are honoured.  Ianvs drops unknown keys silently, so a typo such as ``workspce``
or ``hard_example_mining_mod`` changes a run without a word; here an unknown key in the benchmarking job, its
``rank``/``test_object`` sections or the testenv (and its ``dataset``) is a :class:`ConfigError` naming the file
and key with a "did you mean" hint.  Unknown keys in an algorithm YAML stay warnings: upstream examples carry
keys there (``model_path``, ``dependencies``) that Ianvs ignores.  Relative paths resolve against the current
working directory, as in Ianvs (§9).
"""
from __future__ import annotations

import difflib
import itertools
import os
import warnings
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

import yaml

from ..errors import ConfigError

MODULE_TYPES = ("edgemodel", "cloudmodel", "hard_example_mining", "dataset_processor")
MINING_MODES = ("mining-then-inference", "inference-then-mining")
_JOB_KEYS = {"name", "workspace", "testenv", "test_object", "rank", "simulation"}
_TEST_OBJECT_KEYS = {"type", "algorithms"}
_ALGO_ENTRY_KEYS = {"name", "url"}
_RANK_KEYS = {"sort_by", "visualization", "selected_dataitem", "save_mode"}
_SELECTED_KEYS = {"paradigms", "modules", "hyperparameters", "metrics"}
# testenv keys Ianvs reads itself, then the ones its paradigms read from the kwargs it hands them
# (jointinference: hard_example_mining_mode; federatedlearning: round, client_number, if_mode_llm, gpu_num, fl_data_setting)
_TESTENV_KEYS = {"dataset", "metrics", "use_gpu", "hard_example_mining_mode", "round", "client_number",
                 "if_mode_llm", "gpu_num", "fl_data_setting"}
_DATASET_KEYS = {"train_index", "train_data", "train_data_info", "test_index", "test_data", "test_data_info"}
_METRIC_KEYS = {"name", "url"}
_ALGO_KEYS = {"paradigm_type", "modules", "third_party_packages", "incremental_learning_data_setting",
              "initial_model_url", "fl_data_setting"}
_MODULE_KEYS = {"type", "name", "url", "hyperparameters"}


def load_yaml(path: str, top_key: str) -> Dict[str, Any]:
    """Load ``path`` and return the mapping under ``top_key``, with errors naming the file."""
    if not os.path.isfile(path):
        raise ConfigError(f"{path}: config file not found (paths resolve against the working directory {os.getcwd()})")
    try:
        with open(path, encoding="utf-8") as fh:
            doc = yaml.safe_load(fh)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: invalid YAML: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get(top_key), dict):
        raise ConfigError(f"{path}: expected a mapping under the top-level key '{top_key}:'")
    return doc[top_key]


def _did_you_mean(key: Any, known: set) -> str:
    close = difflib.get_close_matches(str(key), sorted(known), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else f" (known keys: {', '.join(sorted(known))})"


def check_keys(path: str, section: Any, known: set, what: str) -> None:
    """Raise a :class:`ConfigError` for the first key of ``section`` that is not in ``known``."""
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: {what} must be a mapping, got {type(section).__name__}")
    for key in section:
        if key not in known:
            raise ConfigError(f"{path}: unknown key '{key}' in {what}{_did_you_mean(key, known)}; "
                              "Ianvs would ignore it silently")


def _warn_unknown(path: str, section: Dict[str, Any], known: set, what: str) -> None:
    for key in section:
        if key not in known:
            warnings.warn(f"{path}: key '{key}' in {what} is not read by Ianvs and is ignored", stacklevel=3)


@dataclass
class ModuleSpec:
    type: str
    name: str
    url: Optional[str]
    hyperparameters: Dict[str, Any] = field(default_factory=dict)
    source: str = ""  # the algorithm YAML that declared it (for error messages)


@dataclass
class Algorithm:
    """One test case's algorithm: a name and one concrete module per type."""

    name: str
    paradigm_type: str
    modules: Dict[str, ModuleSpec]
    third_party_packages: List[Dict[str, str]] = field(default_factory=list)

    def hyperparameter_columns(self) -> Dict[str, str]:
        """``<type>-<hp>`` -> ``str(value)``, the rank CSV's hyperparameter columns."""
        return {f"{m.type}-{k}": str(v) for m in self.modules.values() for k, v in m.hyperparameters.items()}


@dataclass
class TestEnv:
    path: str
    dataset: Dict[str, Any]
    metrics: List[Dict[str, str]]
    extra: Dict[str, Any]

    @property
    def mining_mode(self) -> str:
        return self.extra.get("hard_example_mining_mode", "mining-then-inference")

    @property
    def test_data(self) -> str:
        for key in ("test_index", "test_data", "test_data_info"):
            if self.dataset.get(key):
                return self.dataset[key]
        raise ConfigError(f"{self.path}: dataset needs one of test_index, test_data, test_data_info")


@dataclass
class BenchmarkJob:
    path: str
    name: str
    workspace: str
    testenv: TestEnv
    algorithms: List[Algorithm]  # one per test case, in Ianvs's order
    rank: Dict[str, Any]

    @property
    def output_dir(self) -> str:
        return os.path.join(self.workspace, self.name)


def _hp_grid(path: str, module_name: str, hps: Any) -> List[Dict[str, Any]]:
    """Cross one module's hyperparameter value lists (Cartesian product, last varies fastest)."""
    if hps is None:
        return [{}]
    if not isinstance(hps, list):
        raise ConfigError(f"{path}: module '{module_name}': 'hyperparameters' must be a list of one-key mappings")
    names, value_lists, base = [], [], {}
    for item in hps:
        if not isinstance(item, dict) or not item:
            raise ConfigError(f"{path}: module '{module_name}': each hyperparameter must be a one-key mapping")
        if len(item) > 1:
            raise ConfigError(
                f"{path}: module '{module_name}': hyperparameter entry {list(item)} has several keys; "
                "Ianvs keeps only the last one, so write one key per list item")
        (hp_name, spec), = item.items()
        values = spec.get("values") if isinstance(spec, dict) else None
        if not isinstance(values, list) or not values:
            raise ConfigError(
                f"{path}: module '{module_name}', hyperparameter '{hp_name}': 'values' must be a non-empty list "
                f"(Ianvs iterates a string character by character and fails on a scalar); got {values!r}")
        if hp_name == "other_hyperparameters":
            for extra in values:
                base.update(_load_plain_yaml(extra))
            continue
        names.append(hp_name)
        value_lists.append(values)
    return [dict(base, **dict(zip(names, combo))) for combo in itertools.product(*value_lists)]


def _load_plain_yaml(path: str) -> Dict[str, Any]:
    if not os.path.isfile(path):
        raise ConfigError(f"{path}: other_hyperparameters file not found")
    with open(path, encoding="utf-8") as fh:
        data = yaml.safe_load(fh) or {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: other_hyperparameters file must hold a mapping")
    return data


def load_algorithm(name: str, path: str) -> List[Algorithm]:
    """Expand one algorithm YAML into its test-case variants."""
    section = load_yaml(path, "algorithm")
    _warn_unknown(path, section, _ALGO_KEYS, "algorithm")
    paradigm = section.get("paradigm_type")
    if paradigm != "jointinference":
        raise ConfigError(f"{path}: paradigm_type must be 'jointinference', got {paradigm!r}")
    modules = section.get("modules")
    if not isinstance(modules, list) or not modules:
        raise ConfigError(f"{path}: 'modules' must be a non-empty list")
    per_type: Dict[str, List[ModuleSpec]] = {}
    for i, m in enumerate(modules):
        if not isinstance(m, dict):
            raise ConfigError(f"{path}: modules[{i}] must be a mapping")
        _warn_unknown(path, m, _MODULE_KEYS, f"modules[{i}]")
        mtype, mname = m.get("type"), m.get("name")
        if mtype not in MODULE_TYPES:
            raise ConfigError(f"{path}: modules[{i}]: 'type' must be one of {MODULE_TYPES}, got {mtype!r}")
        if not isinstance(mname, str) or not mname:
            raise ConfigError(f"{path}: modules[{i}]: missing 'name' (the registered alias)")
        if mtype in per_type:
            raise ConfigError(f"{path}: two modules of type '{mtype}'; Ianvs keeps only the last, declare one per type")
        url = m.get("url")
        if mtype != "hard_example_mining" and not url:
            raise ConfigError(f"{path}: module '{mname}' ({mtype}) needs a 'url' to the file that registers it")
        per_type[mtype] = [ModuleSpec(mtype, mname, url, hp, path) for hp in _hp_grid(path, mname, m.get("hyperparameters"))]
    for required in ("edgemodel", "cloudmodel", "hard_example_mining"):
        if required not in per_type:
            raise ConfigError(f"{path}: jointinference needs a module of type '{required}'")
    packages = section.get("third_party_packages") or []
    variants = []
    for combo in itertools.product(*per_type.values()):
        variants.append(Algorithm(name, paradigm, {m.type: m for m in combo}, packages))
    return variants


def load_testenv(path: str) -> TestEnv:
    section = load_yaml(path, "testenv")
    check_keys(path, section, _TESTENV_KEYS, "testenv")
    dataset = section.get("dataset")
    if not isinstance(dataset, dict):
        raise ConfigError(f"{path}: missing 'dataset' mapping")
    check_keys(path, dataset, _DATASET_KEYS, "testenv.dataset")
    if not any(dataset.get(k) for k in ("train_index", "train_data", "train_data_info")):
        raise ConfigError(f"{path}: dataset needs train_data (Ianvs requires it even for jointinference)")
    metrics = section.get("metrics")
    if not isinstance(metrics, list) or not metrics:
        raise ConfigError(f"{path}: 'metrics' must be a non-empty list of {{name, url}}")
    for i, m in enumerate(metrics):
        if not isinstance(m, dict) or not m.get("name"):
            raise ConfigError(f"{path}: metrics[{i}] needs a 'name'")
        check_keys(path, m, _METRIC_KEYS, f"metrics[{i}]")
    extra = {k: v for k, v in section.items() if k not in ("dataset", "metrics", "use_gpu")}
    env = TestEnv(path, dataset, metrics, extra)
    if env.mining_mode not in MINING_MODES:
        raise ConfigError(f"{path}: hard_example_mining_mode must be one of {MINING_MODES}, got {env.mining_mode!r}")
    return env


def load_benchmarking_job(path: str) -> BenchmarkJob:
    """Parse benchmarkingjob.yaml and everything it references."""
    section = load_yaml(path, "benchmarkingjob")
    check_keys(path, section, _JOB_KEYS, "benchmarkingjob")
    name = section.get("name")
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{path}: missing 'name'")
    if not section.get("testenv"):
        raise ConfigError(f"{path}: missing 'testenv'")
    testenv = load_testenv(section["testenv"])
    obj = section.get("test_object") or {}
    check_keys(path, obj, _TEST_OBJECT_KEYS, "test_object")
    if obj.get("type") != "algorithms" or not isinstance(obj.get("algorithms"), list) or not obj["algorithms"]:
        raise ConfigError(f"{path}: test_object must have type 'algorithms' and a non-empty 'algorithms' list")
    algorithms: List[Algorithm] = []
    for i, a in enumerate(obj["algorithms"]):
        if not isinstance(a, dict) or not a.get("name") or not a.get("url"):
            raise ConfigError(f"{path}: test_object.algorithms[{i}] needs 'name' and 'url'")
        check_keys(path, a, _ALGO_ENTRY_KEYS, f"test_object.algorithms[{i}]")
        algorithms.extend(load_algorithm(a["name"], a["url"]))
    rank = section.get("rank") or {}
    check_keys(path, rank, _RANK_KEYS, "rank")
    sel = rank.get("selected_dataitem") or {}
    check_keys(path, sel, _SELECTED_KEYS, "rank.selected_dataitem")
    missing = [k for k in ("paradigms", "modules", "hyperparameters", "metrics") if not sel.get(k)]
    if missing:
        raise ConfigError(f"{path}: rank.selected_dataitem is missing {missing} (Ianvs crashes after all_rank.csv)")
    metric_names = {m["name"] for m in testenv.metrics}
    for item in rank.get("sort_by") or []:
        key = next(iter(item)) if isinstance(item, dict) and item else None
        if key not in metric_names:
            raise ConfigError(f"{path}: rank.sort_by names {key!r}, which is not a metric in {testenv.path}"
                              f"{_did_you_mean(key, metric_names)}")
        if item[key] not in ("ascend", "descend"):
            raise ConfigError(f"{path}: rank.sort_by {key!r}: direction must be 'ascend' or 'descend', got "
                              f"{item[key]!r} (Ianvs sorts anything but 'ascend' descending)")
    return BenchmarkJob(path, name, section.get("workspace") or "./workspace", testenv, algorithms, rank)
