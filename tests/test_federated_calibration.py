"""Every DP row's noise is solved so that the ε accounted over the whole run is <= its target: checked here against
dp-accounting's own accountant, built independently of :mod:`cloud_edge_privacy.federated.dp`."""
from __future__ import annotations

import math

import dp_accounting
import pytest
from dp_accounting import rdp

from cloud_edge_privacy.federated import dp
from cloud_edge_privacy.federated.methods import parse_method
from cloud_edge_privacy.federated.privacy import FTRL_DELTA, ftrl_calibration, run_report
from cloud_edge_privacy.federated.simulation import FedConfig

MARGIN = 0.005  # accounted ε within 0.5% below the target: the solver is tight, not just safe


def _dpsgd_eps(z: float, q: float, steps: int, delta: float) -> float:
    acc = rdp.RdpAccountant()
    acc.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(z)), steps)
    return acc.get_epsilon(delta)


def _gauss_eps(z: float, count: int, delta: float) -> float:
    acc = rdp.RdpAccountant()
    acc.compose(dp_accounting.GaussianDpEvent(z), count)
    return acc.get_epsilon(delta)


@pytest.mark.parametrize("n_windows", [10, 37, 120, 300])
@pytest.mark.parametrize("target", [1.0, 10.0])
def test_dpsgd_noise_accounted_at_most_target_and_tight(n_windows, target):
    cal = dp.dpsgd_noise(target, n_windows, batch_size=16, local_epochs=1, rounds=10)
    batches = math.ceil(n_windows / 16)  # Opacus: ceil(n/B) batches per epoch, rate 1/ceil(n/B)
    q, steps, delta = 1.0 / batches, batches * 10, 1.0 / n_windows
    assert cal.report["steps"] == steps and cal.report["sample_rate"] == pytest.approx(q, abs=1e-4)
    eps = _dpsgd_eps(cal.scale, q, steps, delta)
    assert eps <= target
    assert eps >= target * (1 - MARGIN)
    assert cal.epsilon_total >= eps  # the reported figure never reads below the accounted one
    assert _dpsgd_eps(cal.scale * 0.98, q, steps, delta) > target  # 2% less noise would overspend


@pytest.mark.parametrize("target", [1.0, 10.0])
def test_ldp_accounted_and_ftrl_accounted_at_most_target(target):
    sens = 2.0
    ldp = dp.ldp_sigma("accounted", target, 1 / 50, 10, 1.0)
    eps = _gauss_eps(ldp.scale / sens, 10, 1 / 50)
    assert target * (1 - MARGIN) <= eps <= target
    cfg = FedConfig()
    ftrl = ftrl_calibration(target, cfg)
    factor = dp.tree_sensitivity_factor(cfg.rounds)
    eps_tree = _gauss_eps(ftrl.scale / factor, 1, FTRL_DELTA)
    assert target * (1 - MARGIN) <= eps_tree <= target


def test_run_report_prints_accounted_epsilon_per_row():
    cfg = FedConfig()
    rep = run_report(parse_method("dp_fedavg"), 10.0, cfg, [12, 40, 90])
    assert rep["epsilon_total_rdp"] <= 10.0 and rep["rounds_accounted"] == cfg.rounds
    assert len(rep["noise_multipliers"]) == 3
    assert run_report(parse_method("dp_ftrl"), 1.0, cfg, [12, 40])["epsilon_total_rdp"] <= 1.0


def test_solver_rejects_bad_target_and_keeps_upper_end():
    with pytest.raises(ValueError):
        dp.solve_noise_multiplier(lambda z: 1.0 / z, 0.0)
    with pytest.raises(ValueError):
        dp.solve_noise_multiplier(lambda z: 1.0 / z, math.inf)
    z = dp.solve_noise_multiplier(lambda z: 1.0 / z, 4.0)  # exact root 0.25
    assert 1.0 / z <= 4.0 and z == pytest.approx(0.25, rel=1e-9)


@pytest.mark.parametrize("n_windows", [5, 17, 100])
def test_dpsgd_schedule_is_what_opacus_runs(n_windows):
    """The accounted schedule is Opacus's: its private loader samples with rate 1/len(loader), len(loader) steps."""
    import torch
    from opacus.data_loader import DPDataLoader

    dl = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.zeros(n_windows, 1)), batch_size=16)
    pdl = DPDataLoader.from_data_loader(dl)
    q, steps = dp.dpsgd_schedule(n_windows, 16, local_epochs=1, rounds=1)
    assert pdl.sample_rate == pytest.approx(q) and len(pdl) == steps
