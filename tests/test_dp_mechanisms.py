"""Each DP/LDP mechanism's realized distribution checked against its stated ε (statistical tests)."""
import math

import numpy as np
import pytest

from cloud_edge_privacy.desensitization import get_operator
from cloud_edge_privacy.desensitization.accountant import BudgetAccountant
from cloud_edge_privacy.desensitization.dp_mechanisms import (ATTRIBUTES, PrismTwoLayerLDP,
                                                             choose_epsilon, k_rr, metric_dp_noise, split_budget)
from cloud_edge_privacy.spans import Span

N = 40_000


def _freq(samples, value):
    return sum(1 for s in samples if s == value) / len(samples)


@pytest.mark.parametrize("eps, k", [(0.5, 8), (1.0, 8), (2.0, 37), (4.0, 5)])
def test_k_rr_matches_its_probabilities_and_the_e_eps_bound(eps, k):
    rng = np.random.default_rng(0)
    domain = [f"v{i}" for i in range(k)]
    out_a = [k_rr("v0", domain, eps, rng) for _ in range(N)]
    out_b = [k_rr("v1", domain, eps, rng) for _ in range(N)]
    p_keep = math.exp(eps) / (math.exp(eps) + k - 1)
    q = (1 - p_keep) / (k - 1)
    p_hat, q_hat = _freq(out_a, "v0"), _freq(out_b, "v0")
    assert abs(p_hat - p_keep) < 4 * math.sqrt(p_keep * (1 - p_keep) / N)
    assert abs(q_hat - q) < 4 * math.sqrt(q * (1 - q) / N) + 1e-3
    # worst-case likelihood ratio over outputs is e^eps (up to sampling error)
    assert p_hat / q_hat == pytest.approx(math.exp(eps), rel=0.15)
    print(f"k-RR eps={eps} k={k}: P(keep)={p_hat:.4f} (theory {p_keep:.4f}), "
          f"ratio={p_hat / q_hat:.3f} (e^eps={math.exp(eps):.3f})")


def test_prism_two_layer_total_ratio_is_bounded_by_total_epsilon():
    """Empirical P[output | input] for two different inputs never exceeds e^(ε1+ε2) beyond noise."""
    op = PrismTwoLayerLDP(epsilon=2.0, alpha=0.5)
    rng = np.random.default_rng(1)

    def sample(cat, value):
        return [op.randomize(cat, value, rng, BudgetAccountant()) for _ in range(N)]

    a, b = sample("LOC", "Gdynia"), sample("LOC", "Oslo")          # Poland vs Norway in the LOC domain
    outs = {o for o in a} | {o for o in b}
    worst = 0.0
    for o in outs:
        pa, pb = _freq(a, o), _freq(b, o)
        if min(pa, pb) * N >= 200:   # enough mass to estimate a ratio
            worst = max(worst, pa / pb, pb / pa)
    assert 1.0 < worst <= math.exp(2.0) * 1.15
    e1, e2 = split_budget(2.0, 0.4, 0.5)
    assert e1 + e2 == pytest.approx(2.0) and e1 == pytest.approx(2.0 * 0.4 / (0.4 + 0.5 * 0.6))
    print(f"PRISM two-layer eps=2: worst empirical ratio {worst:.3f} <= e^2 = {math.exp(2):.3f}")


def test_prism_ldp_charges_each_distinct_value_once_and_is_seeded():
    text = "Anna Berg met Anna Berg in Oslo."
    spans = [Span(0, 9, "PERSON"), Span(14, 23, "PERSON"), Span(27, 31, "LOC")]
    op = get_operator("prism_ldp", epsilon=1.0)
    r1, r2 = op(text, spans, seed=5), op(text, spans, seed=5)
    assert r1.text == r2.text and r1.epsilon == pytest.approx(2.0)   # 2 distinct values x eps 1
    assert r1.replacements[0].replacement == r1.replacements[1].replacement
    assert "Anna Berg" not in r1.text and "Oslo" not in r1.text
    assert len({op(text, spans, seed=s).text for s in range(10)}) > 1     # the seed really drives the noise


def test_laplace_numbers_match_the_laplace_distribution_and_the_bound():
    from diffprivlib.mechanisms import Laplace

    eps, delta_in = 1.0, ATTRIBUTES["age"].sensitivity
    m = Laplace(epsilon=eps, sensitivity=delta_in, random_state=3)
    xs = np.array([m.randomise(40.0) for _ in range(N)])
    b = delta_in / eps
    assert abs(xs.mean() - 40.0) < 4 * b * math.sqrt(2 / N)
    assert xs.var() == pytest.approx(2 * b * b, rel=0.05)
    # P(Y > t | x) / P(Y > t | x + Δ) <= e^eps: Laplace tails, checked at a few thresholds
    m2 = Laplace(epsilon=eps, sensitivity=delta_in, random_state=4)
    ys = np.array([m2.randomise(40.0 + delta_in) for _ in range(N)])
    for t in (0.0, 100.0, 200.0):
        pa, pb = (xs > t).mean(), (ys > t).mean()
        assert pb / pa <= math.exp(eps) * 1.15
    print(f"Laplace eps=1, Δ={delta_in}: var {xs.var():.0f} (theory {2 * b * b:.0f})")


def test_adaptive_epsilon_choice_uses_public_constants_only():
    year = ATTRIBUTES["year"]           # Δ = 130, tolerance 3 years -> needs ε >= 43.3 -> 100
    assert choose_epsilon(year, level=3) == (100.0, True)
    assert choose_epsilon(year, level=5) == (10.0, False)   # capped by sensitivity: privacy wins
    assert choose_epsilon(ATTRIBUTES["amount"], level=2) == (100.0, True)
    assert choose_epsilon(year, level=2, gaussian=True)[0] <= 100.0


def test_dp_numbers_is_seeded_and_accounts_every_value():
    text = "He was born in 1958 and claimed 48,000 euros; born in 1958 indeed."
    spans = [Span(15, 19, "DATETIME"), Span(32, 44, "QUANTITY"), Span(54, 58, "DATETIME")]
    op = get_operator("dp_numbers")
    a, b = op(text, spans, seed=1), op(text, spans, seed=1)
    assert a.text == b.text
    assert a.replacements[0].replacement == a.replacements[2].replacement      # same value, one draw
    assert a.epsilon == pytest.approx(100.0 + 100.0)                            # year ε=100 + amount ε=100
    assert [c.mechanism for c in a.accountant.charges] == ["laplace", "laplace"]
    assert "euros" in a.replacements[1].replacement


def test_metric_dp_noise_norm_follows_gamma():
    rng = np.random.default_rng(2)
    norms = np.array([np.linalg.norm(metric_dp_noise(384, 10.0, rng)) for _ in range(4000)])
    assert norms.mean() == pytest.approx(384 / 10.0, rel=0.02)      # E||z|| = d / eps


def test_metric_dp_words_high_epsilon_keeps_words_low_epsilon_changes_them():
    text = "She worked as a nurse in the hospital."
    spans = [Span(16, 21, "MISC")]
    hi = get_operator("metric_dp_words", epsilon=5000.0)(text, spans, seed=0)
    lo = get_operator("metric_dp_words", epsilon=1.0)(text, spans, seed=0)
    assert hi.text == text and hi.epsilon == 5000.0
    assert hi.masks() == []            # kept words are not masked for TAB scoring
    assert lo.text != text and len(lo.masks()) == 1


def test_accountant_limit():
    acct = BudgetAccountant(limit=1.0)
    acct.spend("x", 0.6)
    with pytest.raises(ValueError, match="exceed the budget"):
        acct.spend("x", 0.6)
    assert acct.total_epsilon == 0.6
