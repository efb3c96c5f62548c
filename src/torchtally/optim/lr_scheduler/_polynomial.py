"""`PolynomialLR` and `LinearLR`: from an initial to an end rate along a power of the progress."""

from __future__ import annotations

import torch
from torch import Tensor

from torchtally.optim._checks import check_bool, check_float
from torchtally.optim.lr_scheduler._base import StartEndLR

__all__ = ["LinearLR", "PolynomialLR"]


def _polynomial(step: Tensor, initial: float, end: float, total_iters: int, power: float) -> Tensor:
    """`(initial - end) * (1 - progress)**power + end`, progress = step / total_iters capped at 1.

    No `cycle` term: in Cerebras 2.10 the cycle factor `ceil((t + 1) / total_iters)` is 1 for
    every step before `total_iters`, and from `total_iters` on the rate is `end`, so `cycle=True`
    gives the same rates as `cycle=False`; ours is accepted and gives those same rates."""
    progress = torch.clamp(step, max=total_iters) / total_iters
    return (initial - end) * (1 - progress) ** power + end


class PolynomialLR(StartEndLR):
    """Polynomial decay from `initial_learning_rate` to `end_learning_rate` (cstorch's).

    `lr = (initial - end) * (1 - min(t, total_iters) / total_iters) ** power + end`.
    `cycle` is accepted and, as in Cerebras 2.10, changes nothing (the rate stays at `end`
    after `total_iters`; TensorFlow's restarting decay is not what cstorch computes). Torch's
    `PolynomialLR(opt, total_iters, power)` on base rate b equals
    `PolynomialLR(opt, b, 0.0, total_iters, power)`.

    Args:
        optimizer: The optimizer whose learning rates are scheduled.
        initial_learning_rate: The rate at step 0.
        end_learning_rate: The rate from step `total_iters` on.
        total_iters: Length of the decay.
        power: Exponent of the decay.
        cycle: Accepted for cstorch compatibility; no effect (see above).

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
        )


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
        cycle: Accepted for cstorch compatibility; no effect (see `PolynomialLR`).

    Example:
        >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> scheduler = LinearLR(opt, 0.0, 1.0, total_iters=4)
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
        cycle: bool = False,
    ) -> None:
        self.cycle = check_bool("cycle", cycle)
        super().__init__(optimizer, initial_learning_rate, end_learning_rate, total_iters)

    def _get_closed_form_lr(self) -> Tensor:
        return _polynomial(
            self._float_epoch(),
            self.initial_learning_rate,
            self.end_learning_rate,
            self.span,
            1.0,
        )
