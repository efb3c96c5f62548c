"""`ConstantLR`: one learning rate for every step."""

from __future__ import annotations

import torch
from torch import Tensor

from torchtally.optim.lr_scheduler._base import LRScheduler
from torchtally.optim.lr_scheduler._checks import check_rate

__all__ = ["ConstantLR"]


class ConstantLR(LRScheduler):
    """A constant learning rate (cstorch's `ConstantLR`).

    This is cstorch's scheduler, not torch's `ConstantLR(factor, total_iters)`. Torch's
    "factor f for n steps, then the base rate" is
    `SequentialLR(opt, [ConstantLR(opt, f * base, n), ConstantLR(opt, base)], milestones=[n])`.

    Args:
        optimizer: The optimizer whose learning rates are scheduled.
        learning_rate: The rate.
        total_iters: How many steps this schedule lasts inside a `SequentialLR` (None: any).

    Example:
        >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> ConstantLR(opt, learning_rate=0.1).get_last_lr()
        [tensor(0.1000)]
    """

    initial_learning_rate: float

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        learning_rate: float,
        total_iters: int | None = None,
    ) -> None:
        self.learning_rate = check_rate("learning_rate", learning_rate)
        self.initial_learning_rate = self.learning_rate
        super().__init__(optimizer, total_iters=total_iters)

    def _get_closed_form_lr(self) -> Tensor:
        return self._full(self.learning_rate)
