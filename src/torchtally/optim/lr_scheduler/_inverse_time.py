"""`InverseExponentialTimeDecayLR` and `InverseSquareRootDecayLR`: rates falling as 1/f(t)."""

from __future__ import annotations

import torch
from torch import Tensor

from torchtally._errors import check_int
from torchtally.optim._checks import check_bool, check_float
from torchtally.optim.lr_scheduler._base import LRScheduler
from torchtally.optim.lr_scheduler._checks import check_rate

__all__ = ["InverseExponentialTimeDecayLR", "InverseSquareRootDecayLR"]


class InverseExponentialTimeDecayLR(LRScheduler):
    """Inverse time decay, `lr = initial / (1 + decay_rate * t**step_exponent / total_iters)`
    (cstorch's; TensorFlow's `InverseTimeDecay` when `step_exponent` is 1).

    With `staircase=True` the ratio `t**step_exponent / total_iters` is floored.

    Args:
        optimizer: The optimizer whose learning rates are scheduled.
        initial_learning_rate: The rate at step 0.
        step_exponent: Power of the step count.
        total_iters: Steps per unit of decay.
        decay_rate: Weight of the decay.
        staircase: Floor the ratio.

    Example:
        >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> scheduler = InverseExponentialTimeDecayLR(opt, 1.0, 2.0, 1, decay_rate=1.0)
        >>> scheduler.step(3)
        >>> scheduler.get_last_lr()
        [tensor(0.1000)]
    """

    initial_learning_rate: float

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        initial_learning_rate: float,
        step_exponent: float,
        total_iters: int,
        decay_rate: float,
        staircase: bool = False,
    ) -> None:
        self.initial_learning_rate = check_rate("initial_learning_rate", initial_learning_rate)
        self.step_exponent = check_float("step_exponent", step_exponent, 0.0)
        check_int("total_iters", total_iters, 1)
        self.decay_rate = check_float("decay_rate", decay_rate, 0.0)
        self.staircase = check_bool("staircase", staircase)
        super().__init__(optimizer, total_iters=total_iters)

    def _get_closed_form_lr(self) -> Tensor:
        ratio = self._float_epoch() ** self.step_exponent / self.span
        if self.staircase:
            ratio = torch.floor(ratio)
        return self.initial_learning_rate / (1 + self.decay_rate * ratio)


class InverseSquareRootDecayLR(LRScheduler):
    """Inverse square-root decay, `lr = initial * scale / sqrt(max(t, warmup_steps))` (cstorch's;
    the schedule of "Attention Is All You Need" after its warmup).

    Args:
        optimizer: The optimizer whose learning rates are scheduled.
        initial_learning_rate: The rate before the scale.
        scale: Factor on the rate.
        warmup_steps: Steps during which the rate stays at `initial * scale / sqrt(warmup_steps)`.

    Example:
        >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> scheduler = InverseSquareRootDecayLR(opt, 1.0, scale=1.0, warmup_steps=4)
        >>> scheduler.step(16)
        >>> scheduler.get_last_lr()
        [tensor(0.2500)]
    """

    initial_learning_rate: float

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        initial_learning_rate: float = 1.0,
        scale: float = 1.0,
        warmup_steps: int = 1,
    ) -> None:
        self.initial_learning_rate = check_rate("initial_learning_rate", initial_learning_rate)
        self.scale = check_float("scale", scale, 0.0)
        check_int("warmup_steps", warmup_steps, 1)
        self.warmup_steps = warmup_steps
        super().__init__(optimizer)

    def _get_closed_form_lr(self) -> Tensor:
        step = torch.clamp(self._float_epoch(), min=self.warmup_steps)
        return self.initial_learning_rate * self.scale * step.rsqrt()
