"""Weight-decay schedulers (the `cstorch.optim.weight_decay_scheduler` API).

Each `*WD` class is the closed-form learning-rate schedule of the same name, with cstorch's
argument names (`initial_val`, `end_val`, `val`, `vals`, `base_val`, `max_val`), writing the
parameter groups' `weight_decay` instead of `lr`. The first write turns a group's
`weight_decay` into a 0-dim float32 tensor, which later steps update in place: the optimizers
apply a tensor rate without reading it (see `has_weight_decay`), so a scheduled decay neither
syncs the host nor recompiles a traced step. `param_group_tags` selects groups as for the
learning-rate schedulers.

On `Adam`, whose `weight_decay` is an L2 rate (torch's), the schedule sets a separate
decoupled decay, the group's `scheduled_weight_decay`, as cstorch's Adam does (it keeps the L2
rate as `l2_regularization_rate` and schedules `weight_decay`): `Optimizer.weight_decay_key`
names the entry a schedule sets.

Example:
    >>> import torch
    >>> from torchtally import optim
    >>> w = torch.nn.Parameter(torch.ones(2))
    >>> opt = optim.AdamW([w], lr=0.1, weight_decay=0.1)
    >>> scheduler = LinearWD(opt, initial_val=0.1, end_val=0.0, total_iters=10)
    >>> scheduler.step()
    >>> opt.param_groups[0]["weight_decay"]
    tensor(0.0900)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import Tensor

from torchtally.optim.lr_scheduler._base import LRScheduler
from torchtally.optim.lr_scheduler._checks import check_rate
from torchtally.optim.lr_scheduler._composite import ChainedScheduler, SequentialLR
from torchtally.optim.lr_scheduler._constant import ConstantLR
from torchtally.optim.lr_scheduler._cosine import CosineAnnealingLR, CosineDecayLR
from torchtally.optim.lr_scheduler._cyclic import CyclicLR
from torchtally.optim.lr_scheduler._exponential import ExponentialLR
from torchtally.optim.lr_scheduler._inverse_time import (
    InverseExponentialTimeDecayLR,
    InverseSquareRootDecayLR,
)
from torchtally.optim.lr_scheduler._lambda import LambdaLR, MultiplicativeLR
from torchtally.optim.lr_scheduler._one_cycle import OneCycleLR
from torchtally.optim.lr_scheduler._polynomial import LinearLR, PolynomialLR
from torchtally.optim.lr_scheduler._scale_per_param import ScalePerParamLR
from torchtally.optim.lr_scheduler._step import MultiStepLR, PiecewiseConstantLR, StepLR
from torchtally.optim.lr_scheduler._warm_restarts import CosineAnnealingWarmRestarts

__all__ = [
    "ChainedWD",
    "ConstantWD",
    "CosineAnnealingWD",
    "CosineAnnealingWarmRestartsWD",
    "CosineDecayWD",
    "CyclicWD",
    "ExponentialWD",
    "InverseExponentialTimeDecayWD",
    "InverseSquareRootDecayWD",
    "LambdaWD",
    "LinearWD",
    "MultiStepWD",
    "MultiplicativeWD",
    "OneCycleWD",
    "PiecewiseConstantWD",
    "PolynomialWD",
    "ScalePerParamWD",
    "SequentialWD",
    "StepWD",
    "WeightDecayScheduler",
]


class WeightDecayScheduler(LRScheduler):
    """Base of the weight-decay schedulers: a closed-form schedule of the groups'
    `weight_decay` (cstorch's `WeightDecayScheduler`). `get_last_value()` returns the decay
    rates set by the latest step."""

    param_group_key = "weight_decay"


def _values(**values: float) -> None:
    # Checked under cstorch's names, so an error names the argument the caller passed.
    for name, value in values.items():
        check_rate(name, value)


class ConstantWD(WeightDecayScheduler, ConstantLR):
    """A constant weight decay `val` (for `total_iters` steps when inside a `SequentialWD`).

    Args:
        optimizer: The optimizer whose weight decay is scheduled.
        val: The weight decay.
        total_iters: The schedule's length, or None.
    """

    def __init__(
        self, optimizer: torch.optim.Optimizer, val: float, total_iters: int | None = None
    ) -> None:
        _values(val=val)
        super().__init__(optimizer, val, total_iters)


class PolynomialWD(WeightDecayScheduler, PolynomialLR):
    """`initial_val` to `end_val` along `(1 - t / total_iters)**power` (`PolynomialLR`).

    Args:
        optimizer: The optimizer whose weight decay is scheduled.
        initial_val: The weight decay at step 0.
        end_val: The weight decay from `total_iters` on.
        total_iters: Length of the decay.
        power: The polynomial's exponent.
        cycle: Restart the decay every `total_iters` steps, stretched as cstorch does.
    """

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        initial_val: float,
        end_val: float,
        total_iters: int,
        power: float = 1.0,
        cycle: bool = False,
    ) -> None:
        _values(initial_val=initial_val, end_val=end_val)
        super().__init__(optimizer, initial_val, end_val, total_iters, power, cycle)


class LinearWD(WeightDecayScheduler, LinearLR):
    """`initial_val` to `end_val` linearly over `total_iters` steps (`LinearLR`).

    Args:
        optimizer: The optimizer whose weight decay is scheduled.
        initial_val: The weight decay at step 0.
        end_val: The weight decay from `total_iters` on.
        total_iters: Length of the ramp.
        cycle: Restart the ramp every `total_iters` steps, as cstorch does.
    """

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        initial_val: float,
        end_val: float,
        total_iters: int,
        cycle: bool = False,
    ) -> None:
        _values(initial_val=initial_val, end_val=end_val)
        super().__init__(optimizer, initial_val, end_val, total_iters, cycle)


class ExponentialWD(WeightDecayScheduler, ExponentialLR):
    """`initial_val * decay_rate**(t / total_iters)` (`ExponentialLR`).

    Args:
        optimizer: The optimizer whose weight decay is scheduled.
        initial_val: The weight decay at step 0.
        total_iters: Steps per factor of `decay_rate`.
        decay_rate: The factor.
        staircase: Decay in whole steps of `total_iters`.
    """

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        initial_val: float,
        total_iters: int,
        decay_rate: float,
        staircase: bool = False,
    ) -> None:
        _values(initial_val=initial_val)
        super().__init__(optimizer, initial_val, total_iters, decay_rate, staircase)


class InverseExponentialTimeDecayWD(WeightDecayScheduler, InverseExponentialTimeDecayLR):
    """`initial_val / (1 + decay_rate * (t / total_iters)**step_exponent)`
    (`InverseExponentialTimeDecayLR`).

    Args:
        optimizer: The optimizer whose weight decay is scheduled.
        initial_val: The weight decay at step 0.
        step_exponent: Exponent of the step ratio.
        total_iters: The step scale.
        decay_rate: The decay rate.
        staircase: Use whole multiples of `total_iters`.
    """

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        initial_val: float,
        step_exponent: float,
        total_iters: int,
        decay_rate: float,
        staircase: bool = False,
    ) -> None:
        _values(initial_val=initial_val)
        super().__init__(optimizer, initial_val, step_exponent, total_iters, decay_rate, staircase)


class InverseSquareRootDecayWD(WeightDecayScheduler, InverseSquareRootDecayLR):
    """`initial_val * scale / sqrt(max(t, warmup_steps))` (`InverseSquareRootDecayLR`).

    Args:
        optimizer: The optimizer whose weight decay is scheduled.
        initial_val: The weight decay's scale.
        scale: A further factor.
        warmup_steps: The steps held at the first value.
    """

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        initial_val: float = 1.0,
        scale: float = 1.0,
        warmup_steps: int = 1,
    ) -> None:
        _values(initial_val=initial_val)
        super().__init__(optimizer, initial_val, scale, warmup_steps)


class CosineDecayWD(WeightDecayScheduler, CosineDecayLR):
    """`initial_val` to `end_val` along half a cosine over `total_iters` (`CosineDecayLR`).

    Args:
        optimizer: The optimizer whose weight decay is scheduled.
        initial_val: The weight decay at step 0.
        end_val: The weight decay from `total_iters` on.
        total_iters: Length of the decay.
    """

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        initial_val: float,
        end_val: float,
        total_iters: int,
    ) -> None:
        _values(initial_val=initial_val, end_val=end_val)
        super().__init__(optimizer, initial_val, end_val, total_iters)


class CosineAnnealingWD(WeightDecayScheduler, CosineAnnealingLR):
    """Cosine annealing between `initial_val` and `eta_min` with period `2 * T_max`
    (`CosineAnnealingLR`).

    Args:
        optimizer: The optimizer whose weight decay is scheduled.
        initial_val: The weight decay at step 0.
        T_max: Half period.
        eta_min: The lowest weight decay.
    """

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        initial_val: float,
        T_max: int,
        eta_min: float = 0.0,
    ) -> None:
        _values(initial_val=initial_val)
        super().__init__(optimizer, initial_val, T_max, eta_min)


class CosineAnnealingWarmRestartsWD(WeightDecayScheduler, CosineAnnealingWarmRestarts):
    """SGDR warm restarts of the weight decay (`CosineAnnealingWarmRestarts`, which anneals
    within every period as torch does; cstorch 2.10 only within the first).

    Args:
        optimizer: The optimizer whose weight decay is scheduled.
        initial_val: The weight decay at the start of every period.
        T_0: Length of the first period.
        T_mult: Growth factor of the period length.
        eta_min: The lowest weight decay.
    """

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        initial_val: float,
        T_0: int,
        T_mult: int = 1,
        eta_min: float = 0.0,
    ) -> None:
        _values(initial_val=initial_val)
        super().__init__(optimizer, initial_val, T_0, T_mult, eta_min)


class StepWD(WeightDecayScheduler, StepLR):
    """`initial_val * gamma**floor(t / step_size)` (`StepLR`).

    Args:
        optimizer: The optimizer whose weight decay is scheduled.
        initial_val: The weight decay at step 0.
        step_size: Steps per factor of `gamma`.
        gamma: The factor.
    """

    def __init__(
        self, optimizer: torch.optim.Optimizer, initial_val: float, step_size: int, gamma: float
    ) -> None:
        _values(initial_val=initial_val)
        super().__init__(optimizer, initial_val, step_size, gamma)


class MultiStepWD(WeightDecayScheduler, MultiStepLR):
    """`initial_val` times `gamma` once per milestone reached (`MultiStepLR`).

    Args:
        optimizer: The optimizer whose weight decay is scheduled.
        initial_val: The weight decay at step 0.
        gamma: The factor.
        milestones: Increasing steps.
    """

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        initial_val: float,
        gamma: float,
        milestones: Sequence[int],
    ) -> None:
        _values(initial_val=initial_val)
        super().__init__(optimizer, initial_val, gamma, milestones)


class PiecewiseConstantWD(WeightDecayScheduler, PiecewiseConstantLR):
    """`vals[i]` from `milestones[i - 1]` to `milestones[i]` (`PiecewiseConstantLR`).

    Args:
        optimizer: The optimizer whose weight decay is scheduled.
        vals: The weight decays, one more than the milestones.
        milestones: Strictly increasing steps.
    """

    def __init__(
        self, optimizer: torch.optim.Optimizer, vals: Sequence[float], milestones: Sequence[int]
    ) -> None:
        if isinstance(vals, (list, tuple)):
            _values(**{f"vals[{i}]": v for i, v in enumerate(vals)})
        super().__init__(optimizer, vals, milestones)


class MultiplicativeWD(WeightDecayScheduler, MultiplicativeLR):
    """`initial_val * coefficient**t` (`MultiplicativeLR`).

    Args:
        optimizer: The optimizer whose weight decay is scheduled.
        initial_val: The weight decay at step 0.
        coefficient: The factor per step.
    """

    def __init__(
        self, optimizer: torch.optim.Optimizer, initial_val: float, coefficient: float
    ) -> None:
        _values(initial_val=initial_val)
        super().__init__(optimizer, initial_val, coefficient)


class LambdaWD(WeightDecayScheduler, LambdaLR):
    """`initial_val * val_lambda(t)` (`LambdaLR`; cstorch's takes the function by overriding
    `set_value_lambda`, here it is an argument).

    Args:
        optimizer: The optimizer whose weight decay is scheduled.
        initial_val: The weight decay the factor multiplies.
        val_lambda: Maps the step-count tensor to the factor, with tensor operations.
    """

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        initial_val: float,
        val_lambda: Callable[[Tensor], Tensor | float],
    ) -> None:
        _values(initial_val=initial_val)
        super().__init__(optimizer, initial_val, val_lambda)


class CyclicWD(WeightDecayScheduler, CyclicLR):
    """Cyclical weight decay between `base_val` and `max_val` (`CyclicLR`).

    Args:
        optimizer: The optimizer whose weight decay is scheduled.
        base_val: The lower bound.
        max_val: The upper bound.
        step_size_up: Steps of the rising half-cycle.
        step_size_down: Steps of the falling half-cycle (default: `step_size_up`).
        mode: "triangular", "triangular2" or "exp_range".
        gamma: The factor of "exp_range".
        scale_mode: "cycle" or "iterations".
    """

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        base_val: float,
        max_val: float,
        step_size_up: int = 2000,
        step_size_down: int | None = None,
        mode: str = "triangular",
        gamma: float = 1.0,
        scale_mode: str = "cycle",
    ) -> None:
        _values(base_val=base_val, max_val=max_val)
        super().__init__(
            optimizer,
            base_val,
            max_val,
            step_size_up,
            step_size_down,
            mode,
            gamma,
            scale_mode=scale_mode,
        )


class OneCycleWD(WeightDecayScheduler, OneCycleLR):
    """The 1cycle policy for the weight decay (`OneCycleLR`).

    Args:
        optimizer: The optimizer whose weight decay is scheduled.
        initial_val: The weight decay at step 0.
        max_val: The peak.
        total_steps: Length of the cycle.
        pct_start: Fraction of the cycle spent rising.
        final_div_factor: The final value is `initial_val / final_div_factor`.
        three_phase: Add a third phase.
        anneal_strategy: "cos" or "linear".
    """

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        initial_val: float,
        max_val: float,
        total_steps: int = 1000,
        pct_start: float = 0.3,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        anneal_strategy: str = "cos",
    ) -> None:
        _values(initial_val=initial_val, max_val=max_val)
        super().__init__(
            optimizer,
            initial_val,
            max_val,
            total_steps,
            pct_start,
            final_div_factor,
            three_phase,
            anneal_strategy,
        )


class SequentialWD(WeightDecayScheduler, SequentialLR):
    """Weight-decay schedules one after another (`SequentialLR`); every child must be a
    weight-decay scheduler.

    Args:
        optimizer: The optimizer whose weight decay is scheduled.
        schedulers: The schedules, in order.
        milestones: The steps at which each next schedule starts.
        last_epoch: The step count before construction; -1 starts a new schedule.
    """


class ChainedWD(WeightDecayScheduler, ChainedScheduler):
    """Weight-decay schedules multiplied together (`ChainedScheduler`): the first gives the
    value, each other one scales it by its value over its initial value.

    Args:
        schedulers: The schedules; all on the same optimizer.
        optimizer: The optimizer (default: the first scheduler's).
    """


class ScalePerParamWD(WeightDecayScheduler, ScalePerParamLR):
    """Each group's weight decay is `scheduler`'s times the group's `adjust_learning_rate`
    (or `adjust_val`), as cstorch's `ScalePerParamWD` reads them.

    Args:
        optimizer: The optimizer whose weight decay is scheduled.
        scheduler: The wrapped weight-decay schedule.
    """
