"""Time-series scenario (issue 14): data, the Rehman et al. operator, baselines, accounting, attacks, metrics."""
import math

import numpy as np
import pytest

from cloud_edge_privacy.desensitization.base import HEURISTIC, PURE
from cloud_edge_privacy.randomness import Randomness
from cloud_edge_privacy.timeseries.attack import attack, balanced_accuracy, reconstruct
from cloud_edge_privacy.timeseries.bench import (BenchConfig, build_messages, own_composition, write_ianvs_jsonl,
                                                 numeric_truth)
from cloud_edge_privacy.timeseries.data import DATASETS, Series, calibration_series, load_series
from cloud_edge_privacy.timeseries.operator import (NoiseStore, TimeSeriesProtector, choose_epsilon, is_sensitive,
                                                    laplace_noise, pearson)
from cloud_edge_privacy.timeseries.ts_metrics import bootstrap_ci, first_number, numeric_error


def toy(values, domain=(0.0, 10.0), threshold=5.0, dataset="solar"):
    return Series(dataset, "toy", "solar_generation", "u", "step", tuple(float(v) for v in values), domain,
                  threshold, "event", user_id="u1")


@pytest.mark.parametrize("ds", DATASETS)
def test_real_series_load_from_the_sktime_wheel(ds):
    s = load_series(ds, 24)
    c = calibration_series(ds, 24)
    assert len(s.values) == 24 and len(c.values) == 24
    lo, hi = s.domain
    assert lo <= min(s.values) and max(s.values) <= hi
    assert s.events().any() and not s.events().all()   # every series has the sensitive event, not everywhere
    assert c.values != s.values                          # calibration data is not the private series


def test_mitdb_heart_rate_spike_is_the_labelled_anomalous_beat():
    from cloud_edge_privacy.timeseries.data import ecg_heart_rate

    hr, anomalous = ecg_heart_rate()
    assert len(hr) == 25 and anomalous.sum() == 1
    assert hr[anomalous][0] > 100 and np.all(hr[~anomalous] < 100)


def test_sensitivity_rules_are_service_dependent_and_fail_safe():
    assert is_sensitive("health_assistant", "heart_rate")
    assert not is_sensitive("weather_report", "wind_speed")
    assert is_sensitive("energy_advice", "solar_generation") and not is_sensitive("health_assistant", "solar_generation")
    assert is_sensitive("unknown_service", "anything")


def test_rule_zero_sends_the_series_unchanged_without_a_claim():
    s = load_series("solar", 24)
    r = TimeSeriesProtector(Randomness.benchmark(1), services={"solar": "weather_report"}).protect(s, "rehman_adaptive")
    assert r.sent == list(s.values) and not r.sensitive and not r.charges and math.isinf(r.epsilon_series)


def test_laplace_scale_is_domain_width_over_epsilon():
    rand = Randomness.benchmark(3)
    noise = laplace_noise(20000, 10.0, 170.0, rand, "scale-test")
    # Laplace(b): mean |X| = b = Δf/ε = 17
    assert abs(np.mean(np.abs(noise)) - 17.0) < 0.6


def test_benchmark_noise_is_reproducible_and_deployment_noise_is_not():
    s = load_series("mitdb", 24)
    a = TimeSeriesProtector(Randomness.benchmark(5)).protect(s, "uniform").sent
    b = TimeSeriesProtector(Randomness.benchmark(5)).protect(s, "uniform").sent
    c = TimeSeriesProtector(Randomness.benchmark(6)).protect(s, "uniform").sent
    assert a == b and a != c
    d1 = TimeSeriesProtector(Randomness.deployment(b"k" * 32)).protect(s, "uniform").sent
    d2 = TimeSeriesProtector(Randomness.deployment(b"k" * 32)).protect(s, "uniform").sent
    assert d1 != d2   # CSPRNG: not derivable from any config


def test_noise_is_stored_per_dataset_and_reused(tmp_path):
    s = load_series("solar", 24)
    store = NoiseStore(tmp_path)
    first = TimeSeriesProtector(Randomness.deployment(b"k" * 32), store=store).protect(s, "uniform").sent
    files = list(tmp_path.glob("*.json"))
    assert len(files) == 1
    # a new protector (new process, fresh CSPRNG) with the same store sends the same noisy values again
    again = TimeSeriesProtector(Randomness.deployment(b"k" * 32), store=NoiseStore(tmp_path)).protect(s, "uniform").sent
    assert again == first


def test_adaptive_epsilon_is_the_smallest_candidate_meeting_the_threshold():
    rand = Randomness.benchmark(0)
    ref = np.sin(np.linspace(0, 6, 48)) * 4 + 5
    eps, corr, met = choose_epsilon(ref, 10.0, (0.0, 10.0), rand, threshold=0.9)
    assert met and corr >= 0.9
    smaller = [c for c in (1.0, 10.0, 100.0, 1000.0) if c < eps]
    for c in smaller:   # each smaller candidate fails the threshold
        _, corr_c, met_c = choose_epsilon(ref, 10.0, (0.0, 10.0), rand, threshold=0.9, candidates=[c])
        assert not met_c
    # an unreachable threshold falls back to the largest ε and says so
    eps2, _, met2 = choose_epsilon(np.zeros(10), 10.0, (0.0, 10.0), rand, threshold=0.99)
    assert eps2 == 1000.0 and not met2


def test_public_calibration_does_not_look_at_the_private_series():
    """Two private series that differ but share the public calibration data get the same ε."""
    p = TimeSeriesProtector(Randomness.benchmark(2))
    s1 = load_series("acsf1", 24, 0)
    s2 = load_series("acsf1", 24, 1)
    assert s1.values != s2.values
    r1, r2 = p.protect(s1, "rehman_adaptive"), p.protect(s2, "rehman_adaptive")
    assert r1.chosen_epsilon == r2.chosen_epsilon
    assert r1.charges[0].privacy_map.kind == PURE


def test_private_calibration_is_labelled_heuristic():
    r = TimeSeriesProtector(Randomness.benchmark(2), calibration="private").protect(load_series("solar", 24),
                                                                                  "rehman_adaptive")
    assert r.charges[0].privacy_map.kind == HEURISTIC
    assert any("leaks" in n for n in r.notes)


def test_composed_epsilon_is_n_times_per_value_epsilon():
    s = load_series("solar", 24)
    p = TimeSeriesProtector(Randomness.benchmark(1))
    r = p.protect(s, "rehman_adaptive")
    assert r.epsilon_series == pytest.approx(24 * r.per_value_epsilon)
    assert len(r.charges) == 24 and all(c.privacy_map.epsilon == r.per_value_epsilon for c in r.charges)
    u = p.protect(s, "uniform")
    assert u.per_value_epsilon == 1.0 and u.epsilon_series == 24.0
    w = p.protect(s, "user_windows")
    assert len(w.sent) == 4 and w.epsilon_series == pytest.approx(10.0)
    assert sum(c.privacy_map.epsilon for c in w.charges) == pytest.approx(10.0)
    per_user = own_composition([(s, r), (s, u)])
    assert per_user["solar-day-1"][PURE] == pytest.approx(24 * r.per_value_epsilon + 24.0)


def test_shared_accountant_agrees_with_our_composition_when_available():
    acc_mod = pytest.importorskip("cloud_edge_privacy.desensitization.accountant")
    if not hasattr(acc_mod, "PrivacyAccountant"):
        pytest.skip("PrivacyAccountant not there yet")
    s = load_series("mitdb", 24)
    r = TimeSeriesProtector(Randomness.benchmark(1)).protect(s, "uniform")
    acc = acc_mod.PrivacyAccountant()
    acc.charge("mitdb/record-excerpt", r.charges)
    assert acc.spent()[PURE]["epsilon"] == pytest.approx(24.0)


def test_released_values_stay_in_the_public_domain_and_no_original_leaks_in_the_prompt():
    s = load_series("mitdb", 24)
    r = TimeSeriesProtector(Randomness.benchmark(4)).protect(s, "uniform")
    assert all(30.0 <= v <= 200.0 for v in r.sent)
    from cloud_edge_privacy.timeseries.bench import format_values

    line = build_messages(s, r, "max")[1]["content"].split("\n")[1]
    orig = TimeSeriesProtector(Randomness.benchmark(4)).protect(s, "none")
    assert line == format_values(s, r) and line != format_values(s, orig)   # only released values are sent
    assert sum(a == b for a, b in zip(line.split(", "), format_values(s, orig).split(", "))) <= 3


def test_attacks_succeed_without_noise_and_fail_at_user_level():
    s = load_series("acsf1", 24)
    p = TimeSeriesProtector(Randomness.benchmark(1))
    clear = attack(p.protect(s, "none"), s)
    assert clear.reconstruction_success and clear.event_success and clear.event_balanced_accuracy == 1.0
    rates = [attack(p.protect(s, "user_windows", tag=i), s) for i in range(30)]
    assert sum(o.event_success for o in rates) <= 3
    assert not any(o.reconstruction_success for o in rates)
    high = [attack(p.protect(s, "rehman_adaptive", tag=i), s) for i in range(30)]
    assert all(o.event_success for o in high)   # ε = 100 per value hides nothing about the bursts


def test_reconstruct_expands_window_means():
    s = toy([1, 1, 9, 9], threshold=5.0)
    p = TimeSeriesProtector(Randomness.benchmark(1), windows=2, user_epsilon=1e9)
    r = p.protect(s, "user_windows")
    est = reconstruct(r, s)
    assert np.allclose(est, [1, 1, 9, 9], atol=1e-3)


def test_balanced_accuracy_and_number_parsing():
    assert balanced_accuracy([1, 0, 0, 0], [1, 0, 0, 0]) == 1.0
    assert balanced_accuracy([1, 0, 0, 0], [0, 0, 0, 0]) == 0.5
    assert first_number("The highest value is 1,234.5 at t=3") == 1234.5
    assert numeric_error("about 12", 10.0, 20.0) == pytest.approx(0.1)
    assert numeric_error("no idea", 10.0, 20.0) == 1.0
    assert numeric_error("anything", None, 20.0) is None


def test_bootstrap_interval_contains_the_mean_and_shrinks_with_n():
    rng = np.random.default_rng(0)
    small = rng.normal(0.9, 0.05, 10)
    big = rng.normal(0.9, 0.05, 400)
    m, lo, hi = bootstrap_ci(small)
    M, LO, HI = bootstrap_ci(big)
    assert lo <= m <= hi and LO <= M <= HI and (HI - LO) < (hi - lo)


def test_ianvs_jsonl_holds_series_and_numeric_truth(tmp_path):
    s = load_series("solar", 24)
    n = write_ianvs_jsonl(tmp_path / "t.jsonl", [s])
    import json

    rows = [json.loads(l) for l in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert n == 3 and rows[0]["question"]["template"] == "max"
    assert float(rows[0]["answer"]) == pytest.approx(numeric_truth(s, "max"))
    assert rows[2]["answer"] == ""


def test_bad_configuration_is_refused():
    from cloud_edge_privacy.errors import ConfigError
    from cloud_edge_privacy.timeseries.ianvs_modules import TimeSeriesCloudModel, TimeSeriesRouter

    with pytest.raises(ValueError):
        TimeSeriesProtector(Randomness.benchmark(1), calibration="peek")
    with pytest.raises(ConfigError, match="epsilom"):
        TimeSeriesCloudModel(method="uniform", epsilom=1)
    with pytest.raises(ConfigError, match="method"):
        TimeSeriesCloudModel(method="laplace")
    with pytest.raises(ConfigError):
        TimeSeriesRouter(route="sometimes")
    with pytest.raises(ValueError):
        TimeSeriesProtector(Randomness.benchmark(1)).protect(load_series("solar"), "gaussian")
    assert pearson([1, 1, 1], [1, 2, 3]) == 0.0
    assert BenchConfig().length == 24


def test_private_calibration_makes_epsilon_depend_on_the_private_series():
    """The paper's choice (correlation on the protected series) gives different users different ε at the same
    threshold, so ε itself reveals something about the series; public calibration gives all the same ε."""
    def chosen(cal, i):
        return TimeSeriesProtector(Randomness.benchmark(1), calibration=cal, threshold=0.85).protect(
            load_series("solar", 24, i), "rehman_adaptive").chosen_epsilon

    assert len({chosen("private", i) for i in range(4)}) > 1
    assert len({chosen("public", i) for i in range(4)}) == 1
