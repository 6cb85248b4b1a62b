"""Every metric, declared once: name, the Ianvs function, its per-sample values and their aggregation, the
direction that is better, its role and a short description.

Everything else derives from :data:`METRICS`: the testenv module files register the Ianvs functions
(:func:`register_metrics`), the report's arrows and the leaderboard's directions read ``direction``
(``leaderboard.py``), and the report's bootstrap intervals read ``per_sample`` and ``aggregation``
(``per_sample.py``).  Adding a metric is one :class:`MetricSpec` below plus one line in a testenv YAML that
selects it (docs/extending.md).

Functions are named by ``"module:function"`` (relative to ``cloud_edge_privacy``) and imported only when
used, so reading a direction loads no metric code.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional

LOWER, HIGHER, INFO = "lower", "higher", "info"
AGGREGATIONS = ("mean", "ratio", "total")  # how per-sample values combine (see per_sample.py)
ROLES = ("leakage", "privacy", "utility", "cost", "routing", "count")


@dataclass(frozen=True)
class MetricSpec:
    """One metric.  ``compute``: ``f(y_true, y_pred)`` as Ianvs calls it (``None``: the report computes it
    from the predictions, e.g. APR); ``per_sample``: ``g(y_true, y_pred, **options)`` -> one value per
    sample (a float, a ``(num, den)`` pair, or ``None`` when the sample does not count), combined by
    ``aggregation``; ``needs``: an optional resource ("trir": background knowledge, "embeddings": MiniLM)
    without which the per-sample values are left out with the reason on stderr; ``family``: the testenv
    module file that registers it (``register_metrics(family)``; the federated and time-series metrics load
    their own extras)."""

    name: str
    direction: str
    role: str
    description: str
    compute: Optional[str] = None
    per_sample: Optional[str] = None
    aggregation: Optional[str] = None
    needs: Optional[str] = None
    family: str = "tab"

    def __post_init__(self) -> None:
        if self.direction not in (LOWER, HIGHER, INFO):
            raise ValueError(f"metric {self.name}: direction {self.direction!r} is not lower, higher or info")
        if self.role not in ROLES:
            raise ValueError(f"metric {self.name}: role {self.role!r} is not one of {ROLES}")
        if (self.per_sample is None) != (self.aggregation is None) or (
                self.aggregation is not None and self.aggregation not in AGGREGATIONS):
            raise ValueError(f"metric {self.name}: per_sample and aggregation ({AGGREGATIONS}) go together")

    def function(self) -> Callable[..., Any]:
        """The Ianvs metric function."""
        if self.compute is None:
            raise ValueError(f"metric {self.name} is computed by the report, not registered with Ianvs")
        return resolve(self.compute)

    def per_sample_function(self) -> Callable[..., List[Any]]:
        if self.per_sample is None:
            raise ValueError(f"metric {self.name} has no per-sample values")
        return resolve(self.per_sample)


def resolve(path: str) -> Callable[..., Any]:
    """``"metrics.privacy:pdr"`` -> the function ``cloud_edge_privacy.metrics.privacy.pdr``."""
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(f"cloud_edge_privacy.{module}"), attr)


_PS = "metrics.per_sample"
_SPECS = [
    # leakage and privacy (TAB, PRISM)
    MetricSpec("leak_direct", LOWER, "leakage", "gold DIRECT identifiers found verbatim in what was sent (count)",
               "metrics.privacy:leak_direct", f"{_PS}:leak_direct_values", "total"),
    MetricSpec("sels", LOWER, "leakage", "sensitivity-weighted share of gold mentions that left the edge",
               "metrics.privacy:sels", f"{_PS}:sels_values", "ratio"),
    MetricSpec("pdr", HIGHER, "privacy", "share of gold DIRECT/QUASI mentions absent from what was sent",
               "metrics.privacy:pdr", f"{_PS}:pdr_values", "ratio"),
    MetricSpec("er_di", HIGHER, "privacy", "TAB entity recall of the masks, direct identifiers",
               "metrics.tab_official:er_di", f"{_PS}:er_di_values", "ratio"),
    MetricSpec("er_qi", HIGHER, "privacy", "TAB entity recall of the masks, quasi identifiers",
               "metrics.tab_official:er_qi", f"{_PS}:er_qi_values", "ratio"),
    MetricSpec("token_recall", HIGHER, "privacy", "TAB token recall of the masks",
               "metrics.tab_official:token_recall"),
    MetricSpec("token_precision", HIGHER, "utility", "TAB token precision of the masks (less over-masking)",
               "metrics.tab_official:token_precision", f"{_PS}:token_precision_values", "ratio"),
    MetricSpec("iar", HIGHER, "privacy", "1 - success of the strongest cheap attack (co-reference, oracle linking)",
               "metrics.attacks:iar"),
    MetricSpec("iar_coref_leak", LOWER, "leakage", "hidden entities still named in clear elsewhere in the sent text",
               "metrics.attacks:coref_leak_rate", f"{_PS}:coref_values", "ratio"),
    MetricSpec("iar_reidentification", LOWER, "leakage", "oracle linking with the gold quasi-identifiers (upper bound)",
               "metrics.attacks:reidentification_rate", f"{_PS}:reidentification_values", "mean"),
    MetricSpec("iar_trir", LOWER, "leakage", "TRIR: share of sent texts a background-knowledge attacker re-identifies",
               "metrics.trir:trir", f"{_PS}:trir_values", "mean", needs="trir"),
    MetricSpec("trir_original", INFO, "privacy", "TRIR on the unprotected originals (the risk before protection)",
               "metrics.trir:trir_original"),
    MetricSpec("iar_inference", LOWER, "leakage", "LM fill-in attack: masked spans recovered",
               "metrics.attacks:inference_attack_rate"),
    MetricSpec("cpp", LOWER, "utility", "1 - cosine(original, sent) with all-MiniLM-L6-v2: how much the sent text changed",
               "metrics.semantic:cpp", f"{_PS}:cpp_values", "mean", needs="embeddings"),
    MetricSpec("privacy_failures", INFO, "count", "samples the gateway failed closed on (nothing sent)",
               "metrics.performance:privacy_failures"),
    # utility
    MetricSpec("llm_judge", HIGHER, "utility", "local LLM judge's 1-10 score of the final answer (0 when none)",
               "metrics.judge:llm_judge"),
    MetricSpec("answer_words", INFO, "utility", "mean number of words of the final answers of completed samples",
               "metrics.performance:answer_words"),
    MetricSpec("apr_similarity", HIGHER, "utility", "cosine of the answer to the unprotected baseline's answer"),
    MetricSpec("apr_judge", HIGHER, "utility", "judge score with privacy / without, same samples"),
    # completion, routing and cost
    MetricSpec("n_completed", HIGHER, "count", "samples that got an answer", "metrics.performance:n_completed"),
    MetricSpec("n_failed", LOWER, "count", "samples that failed (closed): no answer, zero utility",
               "metrics.performance:n_failed"),
    MetricSpec("cache_replays", INFO, "count", "samples whose answer was replayed from the response cache",
               "metrics.performance:cache_replays"),
    MetricSpec("edge_ratio", INFO, "routing", "share of samples answered on the edge",
               "metrics.performance:edge_ratio", f"{_PS}:edge_ratio_values", "mean"),
    MetricSpec("edge_share", INFO, "routing", "share of samples answered on the edge", "metrics.judge:edge_share"),
    MetricSpec("collaborative_share", INFO, "routing", "share of samples answered edge-cloud together",
               "metrics.judge:collaborative_share"),
    MetricSpec("cloud_share", INFO, "routing", "share of samples answered by the cloud", "metrics.judge:cloud_share"),
    MetricSpec("cloud_tokens", LOWER, "cost", "prompt + completion tokens exchanged with the cloud",
               "metrics.performance:cloud_tokens"),
    MetricSpec("latency_mean_ms", LOWER, "cost", "mean end-to-end latency of completed samples, cache replays left out",
               "metrics.performance:latency_mean_ms", f"{_PS}:latency_values", "mean"),
    MetricSpec("lo_pct", LOWER, "cost", "privacy processing time / time without it, % (replays left out)",
               "metrics.performance:lo_pct"),
    MetricSpec("ti_pct", LOWER, "cost", "throughput lost to privacy processing, % (replays left out)",
               "metrics.performance:ti_pct"),
    MetricSpec("completion_time_s", LOWER, "cost", "mean end-to-end completion time of completed samples, s (PRISM)",
               "metrics.edge_energy:completion_time_s"),
    MetricSpec("edge_energy_j", LOWER, "cost", "mean edge-device energy of completed samples, J (RAPL or the labelled CPU-time estimate)",
               "metrics.edge_energy:edge_energy_j"),
    # the federated detector (test-set masks of the trained detector)
    MetricSpec("fed_psr", HIGHER, "privacy", "PSR: share of DIRECT+QUASI gold entities all of whose mentions are masked",
               "federated.ianvs_modules:fed_psr", family="federated"),
    MetricSpec("fed_token_precision", HIGHER, "utility", "TAB token precision of the detector's masks",
               "federated.ianvs_modules:fed_token_precision", family="federated"),
    MetricSpec("fed_token_recall", HIGHER, "privacy", "TAB token recall of the detector's masks",
               "federated.ianvs_modules:fed_token_recall", family="federated"),
    # time series
    MetricSpec("ts_sts_cloud", HIGHER, "utility", "STS of the cloud's answers, original vs released values",
               "timeseries.ianvs_modules:sts_cloud", family="timeseries"),
    MetricSpec("ts_sts_edge", HIGHER, "utility", "STS of the edge's answers, original vs released values",
               "timeseries.ianvs_modules:sts_edge", family="timeseries"),
    MetricSpec("ts_numeric_error_cloud", LOWER, "utility", "|number in the cloud answer - truth| / sensitivity",
               "timeseries.ianvs_modules:numeric_error_cloud", family="timeseries"),
    MetricSpec("ts_attack_event_success", LOWER, "leakage",
               "share of samples whose release let the attacker infer the event",
               "timeseries.ianvs_modules:attack_event_success", family="timeseries"),
    MetricSpec("ts_epsilon_series", LOWER, "privacy", "largest composed ε per series (inf = no noise)",
               "timeseries.ianvs_modules:epsilon_series", family="timeseries"),
    MetricSpec("ts_cloud_share", INFO, "routing", "share of samples sent to the cloud",
               "timeseries.ianvs_modules:cloud_share", family="timeseries"),
]
METRICS: Dict[str, MetricSpec] = {s.name: s for s in _SPECS}
if len(METRICS) != len(_SPECS):
    raise ValueError("a metric is declared twice in metrics/catalog.py")


def per_sample_metrics() -> List[MetricSpec]:
    """The metrics with per-sample values (the report's bootstrap intervals), in declaration order."""
    return [s for s in METRICS.values() if s.per_sample is not None]


def register_metrics(family: str = "tab",
                     wrap: Optional[Callable[[str, Callable[..., Any]], Callable[..., Any]]] = None) -> List[str]:
    """Register the Ianvs function of every declared metric of ``family`` under its name, with Sedna's
    ``ClassFactory`` when it is installed; a testenv module file calls this and nothing else.  ``wrap(name, fn)``
    replaces each function before it is registered (the example records its test cases for the report)."""
    from ..registry import ClassFactory, ClassType

    done = []
    for spec in METRICS.values():
        if spec.family == family and spec.compute is not None:
            fn = spec.function()
            ClassFactory.register(ClassType.GENERAL, alias=spec.name)(wrap(spec.name, fn) if wrap else fn)
            done.append(spec.name)
    if not done:
        raise ValueError(f"no metric of family {family!r} is declared in metrics/catalog.py")
    return done
