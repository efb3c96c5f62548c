"""Every scheduler torch also has gives torch's learning rates, step for step, for 100 steps,
in the equivalent configuration (cstorch's schedulers take the starting rate explicitly where
torch's read the optimizer's base rate)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
from torch.optim import lr_scheduler as torch_sched

from torchtally import optim
from torchtally.optim import lr_scheduler as ours

BASE = 0.1
STEPS = 100
ATOL = 1e-6

Factory = Callable[[Any], Any]

# name -> (our scheduler on our optimizer, torch's on torch.optim.SGD(lr=BASE)).
CASES: dict[str, tuple[Factory, Factory]] = {
    "ConstantLR": (
        lambda o: ours.ConstantLR(o, BASE),
        lambda o: torch_sched.ConstantLR(o, factor=1.0, total_iters=5),
    ),
    "ConstantLR-factor": (
        # torch's factor-for-n-steps form, built from two cstorch ConstantLRs.
        lambda o: ours.SequentialLR(
            o, [ours.ConstantLR(o, 0.5 * BASE), ours.ConstantLR(o, BASE)], milestones=[7]
        ),
        lambda o: torch_sched.ConstantLR(o, factor=0.5, total_iters=7),
    ),
    "LinearLR-up": (
        lambda o: ours.LinearLR(o, 0.2 * BASE, BASE, total_iters=30),
        lambda o: torch_sched.LinearLR(o, start_factor=0.2, end_factor=1.0, total_iters=30),
    ),
    "LinearLR-down": (
        lambda o: ours.LinearLR(o, BASE, 0.05 * BASE, total_iters=60),
        lambda o: torch_sched.LinearLR(o, start_factor=1.0, end_factor=0.05, total_iters=60),
    ),
    "PolynomialLR": (
        lambda o: ours.PolynomialLR(o, BASE, 0.0, total_iters=40, power=2.0),
        lambda o: torch_sched.PolynomialLR(o, total_iters=40, power=2.0),
    ),
    "PolynomialLR-sqrt": (
        lambda o: ours.PolynomialLR(o, BASE, 0.0, total_iters=70, power=0.5),
        lambda o: torch_sched.PolynomialLR(o, total_iters=70, power=0.5),
    ),
    "ExponentialLR": (
        lambda o: ours.ExponentialLR(o, BASE, total_iters=1, decay_rate=0.95),
        lambda o: torch_sched.ExponentialLR(o, gamma=0.95),
    ),
    "StepLR": (
        lambda o: ours.StepLR(o, BASE, step_size=7, gamma=0.5),
        lambda o: torch_sched.StepLR(o, step_size=7, gamma=0.5),
    ),
    "MultiStepLR": (
        lambda o: ours.MultiStepLR(o, BASE, milestones=[10, 30, 30, 60], gamma=0.3),
        lambda o: torch_sched.MultiStepLR(o, milestones=[10, 30, 30, 60], gamma=0.3),
    ),
    "CosineAnnealingLR": (
        lambda o: ours.CosineAnnealingLR(o, BASE, T_max=30, eta_min=0.01),
        lambda o: torch_sched.CosineAnnealingLR(o, T_max=30, eta_min=0.01),
    ),
    "LambdaLR": (
        lambda o: ours.LambdaLR(o, BASE, lambda t: 0.97**t),
        lambda o: torch_sched.LambdaLR(o, lambda t: 0.97**t),
    ),
    "LambdaLR-inverse": (
        lambda o: ours.LambdaLR(o, BASE, lambda t: 10 / (10 + t)),
        lambda o: torch_sched.LambdaLR(o, lambda t: 10 / (10 + t)),
    ),
    "MultiplicativeLR": (
        lambda o: ours.MultiplicativeLR(o, BASE, coefficient=0.98),
        lambda o: torch_sched.MultiplicativeLR(o, lambda _: 0.98),
    ),
    "CosineAnnealingWarmRestarts-mult2": (
        lambda o: ours.CosineAnnealingWarmRestarts(o, BASE, T_0=5, T_mult=2, eta_min=0.001),
        lambda o: torch_sched.CosineAnnealingWarmRestarts(o, T_0=5, T_mult=2, eta_min=0.001),
    ),
    "CosineAnnealingWarmRestarts-mult3": (
        lambda o: ours.CosineAnnealingWarmRestarts(o, BASE, T_0=1, T_mult=3),
        lambda o: torch_sched.CosineAnnealingWarmRestarts(o, T_0=1, T_mult=3),
    ),
    "CosineAnnealingWarmRestarts-mult1": (
        lambda o: ours.CosineAnnealingWarmRestarts(o, BASE, T_0=7),
        lambda o: torch_sched.CosineAnnealingWarmRestarts(o, T_0=7),
    ),
    "CyclicLR-triangular": (
        lambda o: ours.CyclicLR(o, 0.01, BASE, step_size_up=10, step_size_down=5),
        lambda o: torch_sched.CyclicLR(
            o, 0.01, BASE, step_size_up=10, step_size_down=5, cycle_momentum=False
        ),
    ),
    "CyclicLR-triangular2": (
        lambda o: ours.CyclicLR(o, 0.01, BASE, step_size_up=8, mode="triangular2"),
        lambda o: torch_sched.CyclicLR(
            o, 0.01, BASE, step_size_up=8, mode="triangular2", cycle_momentum=False
        ),
    ),
    "CyclicLR-exp_range": (
        lambda o: ours.CyclicLR(o, 0.01, BASE, step_size_up=6, mode="exp_range", gamma=0.98),
        lambda o: torch_sched.CyclicLR(
            o, 0.01, BASE, step_size_up=6, mode="exp_range", gamma=0.98, cycle_momentum=False
        ),
    ),
    "CyclicLR-scale_fn": (
        lambda o: ours.CyclicLR(o, 0.01, BASE, step_size_up=4, scale_fn=lambda x: 0.9**x),
        lambda o: torch_sched.CyclicLR(
            o, 0.01, BASE, step_size_up=4, scale_fn=lambda x: 0.9**x, cycle_momentum=False
        ),
    ),
    "OneCycleLR-cos": (
        lambda o: ours.OneCycleLR(
            o, BASE / 25, BASE, total_steps=100, pct_start=0.3, final_div_factor=1e3
        ),
        lambda o: torch_sched.OneCycleLR(
            o,
            BASE,
            total_steps=100,
            pct_start=0.3,
            div_factor=25,
            final_div_factor=1e3,
            cycle_momentum=False,
        ),
    ),
    "OneCycleLR-linear-three-phase": (
        lambda o: ours.OneCycleLR(
            o,
            BASE / 10,
            BASE,
            total_steps=100,
            pct_start=0.2,
            three_phase=True,
            anneal_strategy="linear",
        ),
        lambda o: torch_sched.OneCycleLR(
            o,
            BASE,
            total_steps=100,
            pct_start=0.2,
            div_factor=10,
            three_phase=True,
            anneal_strategy="linear",
            cycle_momentum=False,
        ),
    ),
    "SequentialLR": (
        lambda o: ours.SequentialLR(
            o,
            [
                ours.LinearLR(o, 0.1 * BASE, BASE, total_iters=10),
                ours.CosineAnnealingLR(o, BASE, T_max=40),
                ours.ExponentialLR(o, BASE, total_iters=1, decay_rate=0.9),
            ],
            milestones=[10, 50],
        ),
        lambda o: torch_sched.SequentialLR(
            o,
            [
                torch_sched.LinearLR(o, start_factor=0.1, total_iters=10),
                torch_sched.CosineAnnealingLR(o, T_max=40),
                torch_sched.ExponentialLR(o, gamma=0.9),
            ],
            milestones=[10, 50],
        ),
    ),
    "ChainedScheduler": (
        lambda o: ours.ChainedScheduler(
            [
                ours.ExponentialLR(o, BASE, total_iters=1, decay_rate=0.97),
                ours.StepLR(o, 1.0, step_size=10, gamma=0.5),
                ours.MultiStepLR(o, 0.3, milestones=[25, 70], gamma=0.2),
            ]
        ),
        lambda o: torch_sched.ChainedScheduler(
            [
                torch_sched.ExponentialLR(o, gamma=0.97),
                torch_sched.StepLR(o, step_size=10, gamma=0.5),
                torch_sched.MultiStepLR(o, milestones=[25, 70], gamma=0.2),
            ]
        ),
    ),
}


def test_cases_cover_every_scheduler_torch_has() -> None:
    # ChainedLR is cstorch's other name of ChainedScheduler.
    names = set(ours.__all__) - {"LRScheduler", "SCHEDULERS", "configure_lr_scheduler", "ChainedLR"}
    in_torch = {n for n in names if hasattr(torch_sched, n)}
    assert {case.split("-")[0] for case in CASES} == in_torch
    assert names - in_torch == {
        "CosineDecayLR",
        "InverseExponentialTimeDecayLR",
        "InverseSquareRootDecayLR",
        "PiecewiseConstantLR",
        "ScalePerParamLR",  # Cerebras-only: tests/cstorch_oracle/test_lr_scheduler_parity.py
    }


def _rates(optimizer: torch.optim.Optimizer, scheduler: Any) -> list[float]:
    rates = [float(optimizer.param_groups[0]["lr"])]
    for _ in range(STEPS):
        optimizer.step()  # no gradients: only the call order torch checks for
        scheduler.step()
        rates.append(float(optimizer.param_groups[0]["lr"]))
    return rates


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_torch_over_100_steps(case: str) -> None:
    make_ours, make_torch = CASES[case]
    our_opt = optim.SGD([torch.zeros(2, requires_grad=True)], lr=BASE)
    torch_opt = torch.optim.SGD([torch.zeros(2, requires_grad=True)], lr=BASE)
    our_scheduler, torch_scheduler = make_ours(our_opt), make_torch(torch_opt)
    got, want = _rates(our_opt, our_scheduler), _rates(torch_opt, torch_scheduler)
    assert got == pytest.approx(want, abs=ATOL, rel=0)
    assert float(our_scheduler.get_last_lr()[0]) == pytest.approx(want[-1], abs=ATOL)
    assert len(set(want)) > 1 or case == "ConstantLR", "the case should exercise a schedule"
