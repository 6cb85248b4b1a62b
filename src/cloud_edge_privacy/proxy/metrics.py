"""The proxy's Prometheus metrics (``/metrics``): one registry per app, labels from fixed vocabularies only.

Labels are the API (``chat``, ``responses``, ``messages``, ``embeddings``), the route (the client's model name
when it is a configured upstream entry, else ``default``: a client's free-text model name never becomes a
label), the HTTP status, the refusal rule (the error code) and detected categories (the detector's fixed
category names).  No label or value is ever a raw value or a hash of one.

With several worker processes (``--processes N``) each process keeps its own counters unless
``PROMETHEUS_MULTIPROC_DIR`` is set (prometheus-client's multiprocess mode): then ``/metrics`` in any
process sums the files every process writes there.
"""
from __future__ import annotations

import os
import re
from typing import Dict, Iterable

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client import CONTENT_TYPE_LATEST  # noqa: F401  (re-exported for the app)

GUARD_FINDING = re.compile(r"([a-z_]+) \(([A-Z][A-Z_]*), field")  # "<check> (<CATEGORY>, field N, ...)"
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)


class ProxyMetrics:
    """Counters and histograms of one proxy app."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.requests = Counter("cep_proxy_requests", "requests answered, by client API, route and HTTP status",
                                ["api", "route", "status"], registry=r)
        self.refusals = Counter("cep_proxy_refusals", "requests refused by the privacy gateway (nothing sent), "
                                "by rule (the error code, or the egress guard's check) and category (the guard "
                                "finding's category; none for other refusals)", ["api", "rule", "category"],
                                registry=r)
        self.detected = Counter("cep_proxy_protected_spans", "spans protected before sending, by category",
                                ["api", "category"], registry=r)
        self.repairs = Counter("cep_proxy_repairs", "repairs made to a request before sending: values the egress "
                               "guard found and had masked (by guard rule and category), keys the allow-list "
                               "dropped (rule field_dropped, category none)", ["api", "rule", "category"],
                               registry=r)
        self.withheld = Counter("cep_proxy_restorations_withheld", "surrogates not restored on purpose (links, "
                                "code, HTML, URL-like tokens, undeclared tool arguments)", ["api"], registry=r)
        self.upstream_attempts = Counter("cep_proxy_upstream_requests", "requests sent upstream (after the "
                                         "audit line), by client API and upstream API", ["api", "upstream_api"],
                                         registry=r)
        self.privacy_seconds = Histogram("cep_proxy_privacy_seconds", "time to allow-list, protect and guard a "
                                         "request", ["api"], buckets=LATENCY_BUCKETS, registry=r)
        self.upstream_seconds = Histogram("cep_proxy_upstream_seconds", "time until the upstream's answer "
                                          "headers (all attempts)", ["api"], buckets=LATENCY_BUCKETS, registry=r)

    def refused(self, api: str, code: str, reason: str = "") -> None:
        """Count one refusal: by its code, or, for an egress-guard block, once per (check, category) the
        guard's reason names (its first findings; the reason never holds a value)."""
        pairs = sorted(set(GUARD_FINDING.findall(reason))) if code == "egress_blocked" else []
        for check, category in pairs or [(code, "none")]:
            self.refusals.labels(api, check, category).inc()

    def repaired(self, api: str, repairs: Dict[str, int], dropped: int) -> None:
        """Count the egress guard's repairs ("rule/category" -> values) and the fields the allow-list dropped."""
        for key, n in repairs.items():
            rule, _, category = str(key).partition("/")
            self.repairs.labels(api, rule, category or "none").inc(n)
        if dropped:
            self.repairs.labels(api, "field_dropped", "none").inc(dropped)

    def protected(self, api: str, detected: Dict[str, int]) -> None:
        for category, n in detected.items():
            self.detected.labels(api, str(category)).inc(n)

    def exposition(self) -> bytes:
        """The text format; with ``PROMETHEUS_MULTIPROC_DIR`` set, the sum over all worker processes."""
        if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            from prometheus_client import multiprocess

            reg = CollectorRegistry()
            multiprocess.MultiProcessCollector(reg)
            return generate_latest(reg)
        return generate_latest(self.registry)


def names(metrics: ProxyMetrics) -> Iterable[str]:
    """The metric families (for docs and tests)."""
    return [m.name for m in metrics.registry.collect()]
