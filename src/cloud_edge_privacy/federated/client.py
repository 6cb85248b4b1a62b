"""Client-side local training: plain, the paper's local DP on the update, and Opacus DP-SGD."""
from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Dict, Optional

import torch

from .dp import clip_and_noise
from .model import ModelConfig, Windows, batch_loss, get_flat, new_model, set_flat, train_epochs


@dataclass(frozen=True)
class LocalDP:
    """Local DP on the released update: clip to θ, add N(0, σ²)."""

    theta: float
    sigma: float


@dataclass(frozen=True)
class DPSGD:
    """Opacus DP-SGD inside the client: per-window clipping to ``max_grad_norm``, noise multiplier z."""

    noise_multiplier: float
    max_grad_norm: float


def local_update(global_flat: torch.Tensor, data: Windows, cfg: ModelConfig, *, epochs: int, lr: float,
                 batch_size: int, seed: int, local_dp: Optional[LocalDP] = None,
                 dpsgd: Optional[DPSGD] = None, secret_randomness: bool = False) -> Dict[str, object]:
    """Train from the global weights on ``data``; return ``{"update", "num_samples", "loss", "norm"}``.

    ``update`` is what leaves the client: the weight difference, clipped and noised under ``local_dp``.
    ``secret_randomness`` (deployment): the DP noise and DP-SGD's Poisson sampling come from a seed drawn from
    the OS CSPRNG, not from ``seed``, so a server that knows the run config cannot recompute and subtract the
    noise.  Without it (benchmark mode) everything follows ``seed`` and is reproducible, and not private
    against whoever knows the seed.
    """
    if secret_randomness:
        seed = secrets.randbits(62)
    gen = torch.Generator().manual_seed(seed)
    model = new_model(cfg, 0)
    set_flat(model, global_flat)
    if dpsgd is not None:
        loss = _train_dpsgd(model, data, epochs=epochs, lr=lr, batch_size=batch_size, seed=seed, dpsgd=dpsgd)
    else:
        loss = train_epochs(model, data, epochs=epochs, lr=lr, batch_size=batch_size, generator=gen)
    update = get_flat(model) - global_flat
    norm = float(update.norm())
    if local_dp is not None:
        update, norm = clip_and_noise(update, local_dp.theta, local_dp.sigma, gen)
    return {"update": update, "num_samples": len(data), "loss": loss, "norm": norm}


def _train_dpsgd(model: torch.nn.Module, data: Windows, *, epochs: int, lr: float, batch_size: int, seed: int,
                 dpsgd: DPSGD) -> float:
    import warnings

    from opacus import PrivacyEngine

    ds = torch.utils.data.TensorDataset(data.x, data.y)
    gen = torch.Generator().manual_seed(seed)
    dl = torch.utils.data.DataLoader(ds, batch_size=batch_size, shuffle=True, generator=gen)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    engine = PrivacyEngine(accountant="rdp", secure_mode=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pmodel, popt, pdl = engine.make_private(module=model, optimizer=opt, data_loader=dl,
                                                noise_multiplier=dpsgd.noise_multiplier,
                                                max_grad_norm=dpsgd.max_grad_norm, poisson_sampling=True,
                                                noise_generator=torch.Generator().manual_seed(seed + 1))
    pmodel.train()
    last = float("nan")
    for _ in range(epochs):
        tot, nb = 0.0, 0
        for xb, yb in pdl:
            if len(xb) == 0:
                continue
            popt.zero_grad()
            loss = batch_loss(pmodel(xb), yb)
            loss.backward()
            popt.step()
            tot += float(loss.detach())
            nb += 1
        last = tot / max(nb, 1)
    return last
