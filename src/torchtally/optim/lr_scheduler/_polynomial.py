"""`PolynomialLR` and `LinearLR`: from an initial to an end rate along a power of the progress."""

from __future__ import annotations

from typing import final

import torch
from torch import Tensor

from torchtally.optim._checks import check_bool, check_float
from torchtally.optim.lr_scheduler._base import StartEndLR

__all__ = ["LinearLR", "PolynomialLR"]


def _polynomial(
    step: Tensor, initial: float, end: float, total_iters: int, power: float, cycle: bool
) -> Tensor:
    """`(initial - end) * (1 - progress)**power + end`, progress = step / total_iters capped at 1,
    or with `cycle` measured against the next multiple of `total_iters` (TensorFlow's form)."""
    if cycle:
        # At step 0 the first cycle already applies: ceil(0) = 0 would divide by zero.
        span = total_iters * torch.clamp(torch.ceil(step / total_iters), min=1)
        progress = step / span
    else:
        progress = torch.clamp(step, max=total_iters) / total_iters
    return (initial - end) * (1 - progress) ** power + end


@final
class PolynomialLR(StartEndLR):
    """Polynomial decay from `initial_learning_rate` to `end_learning_rate` (cstorch's).

    `lr = (initial - end) * (1 - min(t, total_iters) / total_iters) ** power + end`; with
    `cycle=True` the decay restarts each `total_iters` steps. Torch's
    `PolynomialLR(opt, total_iters, power)` on base rate b equals
    `PolynomialLR(opt, b, 0.0, total_iters, power)`.

    Args:
        optimizer: The optimizer whose learning rates are scheduled.
        initial_learning_rate: The rate at step 0.
        end_learning_rate: The rate from step `total_iters` on.
        total_iters: Length of the decay.
        power: Exponent of the decay.
        cycle: Restart the decay every `total_iters` steps.

    Example:
        >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> scheduler = PolynomialLR(opt, 1.0, 0.0, total_iters=2, power=2.0)
        >>> scheduler.step()
        >>> scheduler.get_last_lr()
        [tensor(0.2500)]
    """

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        initial_learning_rate: float,
        end_learning_rate: float,
        total_iters: int,
        power: float = 1.0,
        cycle: bool = False,
    ) -> None:
        self.power = check_float("power", power, 0.0)
        self.cycle = check_bool("cycle", cycle)
        super().__init__(optimizer, initial_learning_rate, end_learning_rate, total_iters)

    def _get_closed_form_lr(self) -> Tensor:
        return _polynomial(
            self._float_epoch(),
            self.initial_learning_rate,
            self.end_learning_rate,
            self.span,
            self.power,
            self.cycle,
        )


@final
class LinearLR(StartEndLR):
    """Linear change from `initial_learning_rate` to `end_learning_rate` over `total_iters`
    steps, then constant (cstorch's).

    Torch's `LinearLR(opt, start_factor, end_factor, total_iters)` on base rate b equals
    `LinearLR(opt, b * start_factor, b * end_factor, total_iters)`.

    Args:
        optimizer: The optimizer whose learning rates are scheduled.
        initial_learning_rate: The rate at step 0.
        end_learning_rate: The rate from step `total_iters` on.
        total_iters: Length of the ramp.

    Example:
        >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> scheduler = LinearLR(opt, 0.0, 1.0, total_iters=4)
        >>> scheduler.step()
        >>> scheduler.get_last_lr()
        [tensor(0.2500)]
    """

    def _get_closed_form_lr(self) -> Tensor:
        return _polynomial(
            self._float_epoch(),
            self.initial_learning_rate,
            self.end_learning_rate,
            self.span,
            1.0,
            False,
        )
