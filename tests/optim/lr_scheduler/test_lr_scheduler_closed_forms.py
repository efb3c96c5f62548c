"""The cstorch-only schedules (and the cstorch-only options of the others) against their
formulas, evaluated in plain Python for 100 steps."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
import torch

from torchtally import optim
from torchtally.optim import lr_scheduler as ours

STEPS = 100

# name -> (scheduler factory, formula of the step t).
CASES: dict[str, tuple[Callable[[Any], Any], Callable[[int], float]]] = {
    "CosineDecayLR": (
        lambda o: ours.CosineDecayLR(o, 0.1, 0.01, total_iters=40),
        lambda t: 0.01 + 0.09 * 0.5 * (1 + math.cos(math.pi * min(t, 40) / 40)),
    ),
    "InverseExponentialTimeDecayLR": (
        lambda o: ours.InverseExponentialTimeDecayLR(o, 0.1, 1.5, total_iters=20, decay_rate=0.5),
        lambda t: 0.1 / (1 + 0.5 * t**1.5 / 20),
    ),
    "InverseExponentialTimeDecayLR-staircase": (
        lambda o: ours.InverseExponentialTimeDecayLR(
            o, 0.1, 1.0, total_iters=10, decay_rate=1.0, staircase=True
        ),
        lambda t: 0.1 / (1 + 1.0 * (t // 10)),
    ),
    "InverseSquareRootDecayLR": (
        lambda o: ours.InverseSquareRootDecayLR(o, 0.5, scale=0.2, warmup_steps=16),
        lambda t: 0.5 * 0.2 / math.sqrt(max(t, 16)),
    ),
    "PiecewiseConstantLR": (
        lambda o: ours.PiecewiseConstantLR(o, [0.1, 0.05, 0.2, 0.001], milestones=[10, 11, 60]),
        lambda t: 0.1 if t < 10 else 0.05 if t < 11 else 0.2 if t < 60 else 0.001,
    ),
    "PolynomialLR-end": (
        lambda o: ours.PolynomialLR(o, 0.1, 0.02, total_iters=50, power=3.0),
        lambda t: (0.1 - 0.02) * (1 - min(t, 50) / 50) ** 3 + 0.02,
    ),
    "PolynomialLR-cycle": (
        # Cerebras 2.10's cycle (tests/cstorch_oracle/test_lr_scheduler_parity.py): its cycle
        # factor is 1 before total_iters and the rate is the end rate after, so it changes
        # nothing (TensorFlow's restarting decay, asserted here before, is not cstorch's).
        lambda o: ours.PolynomialLR(o, 0.1, 0.0, total_iters=30, power=1.0, cycle=True),
        lambda t: 0.1 * (1 - min(t, 30) / 30),
    ),
    "ExponentialLR-smooth": (
        lambda o: ours.ExponentialLR(o, 0.1, total_iters=10, decay_rate=0.5),
        lambda t: 0.1 * 0.5 ** (t / 10),
    ),
    "ExponentialLR-staircase": (
        lambda o: ours.ExponentialLR(o, 0.1, total_iters=10, decay_rate=0.5, staircase=True),
        lambda t: 0.1 * 0.5 ** (t // 10),
    ),
    "ChainedScheduler-normalizes-later-schedules": (
        lambda o: ours.ChainedScheduler(
            [ours.CosineDecayLR(o, 0.1, 0.0, total_iters=100), ours.StepLR(o, 4.0, 20, 0.5)]
        ),
        lambda t: (0.05 * (1 + math.cos(math.pi * t / 100))) * 0.5 ** (t // 20),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_follows_its_formula_for_100_steps(case: str) -> None:
    make, formula = CASES[case]
    opt = optim.SGD([torch.zeros(2, requires_grad=True)], lr=1.0)
    scheduler = make(opt)
    for t in range(STEPS + 1):
        if t:
            scheduler.step()
        assert float(opt.param_groups[0]["lr"]) == pytest.approx(formula(t), abs=1e-7), t
