"""`CosineAnnealingWarmRestarts`: cosine annealing that restarts, each period `T_mult` times
longer than the last (SGDR)."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from torchtally._errors import check_int
from torchtally.optim.lr_scheduler._base import LRScheduler
from torchtally.optim.lr_scheduler._checks import check_rate

__all__ = ["CosineAnnealingWarmRestarts"]


class CosineAnnealingWarmRestarts(LRScheduler):
    """SGDR (Loshchilov & Hutter, 2017), equal to torch's `CosineAnnealingWarmRestarts`.

    Period i lasts `T_0 * T_mult**i` steps; within it the rate falls from
    `initial_learning_rate` to `eta_min` along half a cosine. The current period is found in
    closed form: a float logarithm gives its index, then exact integer arithmetic corrects it
    at the boundaries, where the logarithm may round the wrong way.

    Args:
        optimizer: The optimizer whose learning rates are scheduled.
        initial_learning_rate: The rate at the start of every period.
        T_0: Length of the first period.
        T_mult: Growth factor of the period length (an integer >= 1).
        eta_min: The lowest rate.

    Example:
        >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> scheduler = CosineAnnealingWarmRestarts(opt, 1.0, T_0=2, T_mult=2)
        >>> scheduler.step(2)
        >>> scheduler.get_last_lr()
        [tensor(1.)]
    """

    initial_learning_rate: float

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        initial_learning_rate: float,
        T_0: int,
        T_mult: int = 1,
        eta_min: float = 0.0,
    ) -> None:
        self.initial_learning_rate = check_rate("initial_learning_rate", initial_learning_rate)
        check_int("T_0", T_0, 1)
        check_int("T_mult", T_mult, 1)
        self.T_0, self.T_mult = T_0, T_mult
        self.eta_min = check_rate("eta_min", eta_min)
        super().__init__(optimizer)

    def _period_start(self, index: Tensor) -> Tensor:
        """First step of period `index`: T_0 * (T_mult**index - 1) / (T_mult - 1), exactly."""
        return self.T_0 * (self.T_mult**index - 1) // (self.T_mult - 1)

    def _position(self) -> tuple[Tensor, Tensor]:
        """Steps into the current period, and the period's length."""
        step = self.last_epoch
        if self.T_mult == 1:
            return step % self.T_0, torch.full_like(step, self.T_0)
        ratio = step.to(torch.float32) * (self.T_mult - 1) / self.T_0 + 1
        index = torch.floor(torch.log(ratio) / math.log(self.T_mult)).to(torch.int64)
        index = torch.clamp(index, min=0)
        index = torch.where(self._period_start(index + 1) <= step, index + 1, index)
        index = torch.where(self._period_start(index) > step, index - 1, index)
        return step - self._period_start(index), self.T_0 * self.T_mult**index

    def _get_closed_form_lr(self) -> Tensor:
        into, length = self._position()
        progress = into.to(torch.float32) / length.to(torch.float32)
        cosine = 0.5 * (1 + torch.cos(math.pi * progress))
        return self.eta_min + (self.initial_learning_rate - self.eta_min) * cosine
