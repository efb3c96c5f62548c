"""`CosineDecayLR` and `CosineAnnealingLR`: half-cosine schedules."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from torchtally._errors import check_int
from torchtally.optim.lr_scheduler._base import LRScheduler, StartEndLR
from torchtally.optim.lr_scheduler._checks import check_rate

__all__ = ["CosineAnnealingLR", "CosineDecayLR"]


def _half_cosine(high: float, low: float, progress: Tensor) -> Tensor:
    """`high` at progress 0, `low` at progress 1, along half a cosine."""
    return low + (high - low) * 0.5 * (1 + torch.cos(math.pi * progress))


class CosineDecayLR(StartEndLR):
    """Cosine decay from `initial_learning_rate` to `end_learning_rate` over `total_iters`
    steps, then constant (cstorch's).

    Args:
        optimizer: The optimizer whose learning rates are scheduled.
        initial_learning_rate: The rate at step 0.
        end_learning_rate: The rate from step `total_iters` on.
        total_iters: Length of the decay.

    Example:
        >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> scheduler = CosineDecayLR(opt, 1.0, 0.0, total_iters=2)
        >>> scheduler.step()
        >>> scheduler.get_last_lr()
        [tensor(0.5000)]
    """

    def _get_closed_form_lr(self) -> Tensor:
        # Cerebras' order of float operations: cos((pi / T) * t), then scaled.
        step = torch.clamp(self._float_epoch(), max=self.span)
        progress = (torch.cos(step * (math.pi / self.span)) + 1) * 0.5
        diff = self.initial_learning_rate - self.end_learning_rate
        return progress * diff + self.end_learning_rate


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing (Loshchilov & Hutter's SGDR without restarts), equal to torch's
    `CosineAnnealingLR`: `lr = eta_min + (initial - eta_min) * (1 + cos(pi * t / T_max)) / 2`.

    Past `T_max` the cosine goes on, so the rate climbs back up, as in torch.

    Args:
        optimizer: The optimizer whose learning rates are scheduled.
        initial_learning_rate: The rate at step 0 (torch: the optimizer's base rate).
        T_max: Steps of the half period.
        eta_min: The lowest rate.

    Example:
        >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> scheduler = CosineAnnealingLR(opt, 1.0, T_max=2)
        >>> scheduler.step(2)
        >>> scheduler.get_last_lr()
        [tensor(0.)]
    """

    initial_learning_rate: float

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        initial_learning_rate: float,
        T_max: int,
        eta_min: float = 0.0,
    ) -> None:
        self.initial_learning_rate = check_rate("initial_learning_rate", initial_learning_rate)
        check_int("T_max", T_max, 1)
        self.T_max = T_max
        self.eta_min = check_rate("eta_min", eta_min)
        super().__init__(optimizer)

    def _get_closed_form_lr(self) -> Tensor:
        progress = self._float_epoch() / self.T_max
        return _half_cosine(self.initial_learning_rate, self.eta_min, progress)
