"""`ExponentialLR`: the rate multiplied by `decay_rate` every `total_iters` steps (smoothly)."""

from __future__ import annotations

import torch
from torch import Tensor

from torchtally._errors import check_int
from torchtally.optim._checks import check_bool, check_float
from torchtally.optim.lr_scheduler._base import LRScheduler
from torchtally.optim.lr_scheduler._checks import check_rate

__all__ = ["ExponentialLR"]


class ExponentialLR(LRScheduler):
    """Exponential decay, `lr = initial * decay_rate ** (t / total_iters)` (cstorch's).

    With `staircase=True` the exponent is floored, so the rate drops in steps. Torch's
    `ExponentialLR(opt, gamma)` on base rate b equals `ExponentialLR(opt, b, 1, gamma)`.

    Args:
        optimizer: The optimizer whose learning rates are scheduled.
        initial_learning_rate: The rate at step 0.
        total_iters: Steps over which the rate is multiplied by `decay_rate` once.
        decay_rate: The factor per `total_iters` steps.
        staircase: Floor the exponent.

    Example:
        >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> scheduler = ExponentialLR(opt, 1.0, total_iters=2, decay_rate=0.25)
        >>> scheduler.step()
        >>> scheduler.get_last_lr()
        [tensor(0.5000)]
    """

    initial_learning_rate: float

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        initial_learning_rate: float,
        total_iters: int,
        decay_rate: float,
        staircase: bool = False,
    ) -> None:
        self.initial_learning_rate = check_rate("initial_learning_rate", initial_learning_rate)
        check_int("total_iters", total_iters, 1)
        self.decay_rate = check_float("decay_rate", decay_rate, 0.0)
        self.staircase = check_bool("staircase", staircase)
        super().__init__(optimizer, total_iters=total_iters)

    def _get_closed_form_lr(self) -> Tensor:
        exponent = self._float_epoch() / self.span
        if self.staircase:
            exponent = torch.floor(exponent)
        return self.initial_learning_rate * self.decay_rate**exponent
