"""PrivacyAccountant: per-kind budgets per document and per session, atomic charges, thread safety."""
import math
import threading

import pytest
from pydantic import ValidationError

from cloud_edge_privacy.desensitization import get_operator
from cloud_edge_privacy.desensitization.accountant import (MEANINGFUL_EPSILON, Budget, BudgetExceededError,
                                                          PrivacyAccountant, meaningful)
from cloud_edge_privacy.desensitization.base import APPROXIMATE, HEURISTIC, METRIC, PURE, PrivacyCharge, PrivacyMap
from cloud_edge_privacy.errors import PrivacyGatewayError
from cloud_edge_privacy.randomness import Randomness
from cloud_edge_privacy.spans import Span


def ch(kind: str, eps: float, delta: float = 0.0) -> PrivacyCharge:
    return PrivacyCharge(PrivacyMap("test", kind, eps, delta), "TEST:x")


def test_charge_is_atomic_and_the_message_names_kind_limit_and_amount():
    acct = PrivacyAccountant(per_document=Budget(pure=1.0))
    acct.charge("doc1", [ch(PURE, 0.6)])
    with pytest.raises(BudgetExceededError) as err:
        acct.charge("doc1", [ch(PURE, 0.2), ch(PURE, 0.3)])     # the first fits, the pair does not
    msg = str(err.value)
    assert "pure" in msg and "1" in msg and "1.1" in msg and "per-document" in msg and "doc1" in msg
    assert acct.spent("doc1") == {PURE: {"epsilon": 0.6, "delta": 0.0}}   # nothing of the pair recorded
    acct.charge("doc1", [ch(PURE, 0.4)])                         # exactly the limit is allowed
    assert acct.spent("doc1")[PURE]["epsilon"] == pytest.approx(1.0)
    acct.charge("doc2", [ch(PURE, 1.0)])                         # another document has its own budget
    assert isinstance(err.value, PrivacyGatewayError)


def test_atomic_across_kinds_one_kind_over_means_none_recorded():
    acct = PrivacyAccountant(per_document=Budget(pure=1.0, metric=5.0))
    with pytest.raises(BudgetExceededError, match="metric"):
        acct.charge("d", [ch(PURE, 0.5), ch(METRIC, 6.0)])
    assert acct.spent("d") == {} and acct.spent() == {}


def test_kinds_are_never_added_together():
    acct = PrivacyAccountant(per_document=Budget(pure=1.0, approximate=(1.0, 1e-5), metric=10.0))
    acct.charge("d", [ch(PURE, 0.9), ch(APPROXIMATE, 0.9, 1e-6), ch(METRIC, 9.0), ch(HEURISTIC, 0.0)])
    spent = acct.spent("d")
    assert spent[PURE] == {"epsilon": 0.9, "delta": 0.0}
    assert spent[APPROXIMATE]["epsilon"] == 0.9 and spent[APPROXIMATE]["delta"] == pytest.approx(1e-6)
    assert spent[METRIC]["epsilon"] == 9.0
    assert acct.heuristic_releases("d") == 1 and HEURISTIC not in spent


def test_session_budget_spans_documents_and_delta_is_limited():
    acct = PrivacyAccountant(per_session=Budget(pure=2.0, approximate=(10.0, 2e-5)))
    acct.charge("a", [ch(PURE, 1.5)])
    with pytest.raises(BudgetExceededError, match="per-session"):
        acct.charge("b", [ch(PURE, 0.6)])
    acct.charge("b", [ch(PURE, 0.5)])
    assert acct.spent() == {PURE: {"epsilon": 2.0, "delta": 0.0}} and acct.scopes() == ["a", "b"]
    acct.charge("a", [ch(APPROXIMATE, 1.0, 1e-5)])
    with pytest.raises(BudgetExceededError, match="delta"):
        acct.charge("c", [ch(APPROXIMATE, 1.0, 1.5e-5)])          # ε fits, δ does not
    # δ composes as 1 - Π(1 - δ_i) (diffprivlib's basic composition)
    acct.charge("c", [ch(APPROXIMATE, 1.0, 0.5e-5)])
    assert acct.spent()[APPROXIMATE]["delta"] == pytest.approx(1 - (1 - 1e-5) * (1 - 0.5e-5))


def test_no_budget_records_without_limits_and_unlimited_kinds():
    acct = PrivacyAccountant()
    acct.charge("d", [ch(PURE, 100.0)] * 3)
    assert acct.spent()[PURE]["epsilon"] == 300.0
    only_pure = PrivacyAccountant(per_document=Budget(pure=1.0))
    only_pure.charge("d", [ch(METRIC, 50.0)])                    # a kind left None is not limited
    assert only_pure.spent("d") == {METRIC: {"epsilon": 50.0, "delta": 0.0}}


@pytest.mark.parametrize("eps", [math.inf, math.nan, 0.0, -1.0])
def test_invalid_charges_and_budgets_are_refused(eps):
    acct = PrivacyAccountant()
    with pytest.raises(BudgetExceededError, match="epsilon"):
        acct.charge("d", [ch(PURE, eps)])
    assert acct.spent() == {}
    with pytest.raises(ValidationError):
        Budget(pure=eps)
    with pytest.raises(ValidationError):
        Budget(metric=eps)


def test_budget_validation():
    with pytest.raises(ValidationError, match="delta"):
        Budget(approximate=(1.0, 1.0))
    with pytest.raises(ValidationError):
        Budget(purr=1.0)
    assert Budget(approximate=(1, 1e-5)).limit(APPROXIMATE) == (1.0, 1e-5) and Budget().limit(PURE) is None


def test_concurrent_charges_never_overshoot_the_session_budget():
    acct = PrivacyAccountant(per_session=Budget(pure=5.0))
    ok, refused = [], []
    lock = threading.Lock()

    def worker(i: int) -> None:
        for j in range(100):
            try:
                acct.charge(f"doc{i}-{j}", [ch(PURE, 0.005), ch(PURE, 0.005)])
                with lock:
                    ok.append(1)
            except BudgetExceededError:
                with lock:
                    refused.append(1)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(ok) == 500 and len(refused) == 300
    assert acct.spent()[PURE]["epsilon"] == pytest.approx(5.0)


def test_the_pipeline_call_with_an_operator_result():
    """What the edge pipeline does: charge(doc_scope, result.charges) before sending."""
    text = "On 3 May 1998 he was 51 years old."
    spans = [Span(3, 13, "DATETIME"), Span(21, 33, "DEM")]
    res = get_operator("dp_numbers", epsilon=1.0)(text, spans, Randomness.benchmark(0), "doc-7")
    acct = PrivacyAccountant(per_document=Budget(pure=1.5))
    with pytest.raises(BudgetExceededError, match="pure spend would reach epsilon 2"):
        acct.charge("doc-7", res.charges)                         # date 1 + age 1 > 1.5
    assert acct.spent("doc-7") == {}
    PrivacyAccountant(per_document=Budget(pure=2.0)).charge("doc-7", res.charges)


def test_meaningful():
    assert MEANINGFUL_EPSILON == 10.0
    assert meaningful(1.0) and meaningful(10.0)
    assert not meaningful(10.5) and not meaningful(math.inf) and not meaningful(math.nan) and not meaningful(None)


def test_composition_matches_diffprivlib_basic_composition():
    from diffprivlib import BudgetAccountant

    spends = [(0.3, 1e-6), (1.2, 0.0), (0.05, 3e-5), (2.0, 1e-7)]
    acct = PrivacyAccountant()
    for i, (e, d) in enumerate(spends):
        acct.charge(f"s{i % 2}", [ch(APPROXIMATE, e, d)])
    eps, delta = BudgetAccountant().total(spent_budget=spends)
    assert acct.spent()[APPROXIMATE]["epsilon"] == pytest.approx(eps)
    assert acct.spent()[APPROXIMATE]["delta"] == pytest.approx(delta, rel=1e-12)
