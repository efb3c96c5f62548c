"""`LambdaLR` and `MultiplicativeLR`: the initial rate times a function of the step."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from torchtally.optim._base import SCALAR_DTYPE
from torchtally.optim._checks import check_float
from torchtally.optim.lr_scheduler._base import LRScheduler
from torchtally.optim.lr_scheduler._checks import check_rate

__all__ = ["LambdaLR", "MultiplicativeLR"]


class LambdaLR(LRScheduler):
    """`lr = initial_learning_rate * lr_lambda(t)`, equal to torch's `LambdaLR`.

    `lr_lambda` receives the step count as a 0-dim int64 tensor (torch passes an int), so it
    must be written with operators and tensor functions, as `lambda t: 0.95 ** t` or
    `lambda t: torch.clamp(t / 100, max=1)`; a Python `if` on `t` would read it on the host.

    Args:
        optimizer: The optimizer whose learning rates are scheduled.
        initial_learning_rate: The rate the factor multiplies (torch: the base rate).
        lr_lambda: Maps the step-count tensor to the factor.

    Example:
        >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> scheduler = LambdaLR(opt, 1.0, lambda t: 1 / (t + 1))
        >>> scheduler.step()
        >>> scheduler.get_last_lr()
        [tensor(0.5000)]
    """

    initial_learning_rate: float

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        initial_learning_rate: float,
        lr_lambda: Callable[[Tensor], Tensor | float],
    ) -> None:
        self.initial_learning_rate = check_rate("initial_learning_rate", initial_learning_rate)
        if not callable(lr_lambda):
            raise ValueError(
                f"Argument `lr_lambda` must be callable. Received: lr_lambda={lr_lambda!r}"
            )
        self.lr_lambda = lr_lambda
        super().__init__(optimizer)

    def _get_closed_form_lr(self) -> Tensor:
        factor = self.lr_lambda(self.last_epoch)
        if not isinstance(factor, Tensor):
            factor = self._full(float(factor))
        return self.initial_learning_rate * factor.to(SCALAR_DTYPE)


class MultiplicativeLR(LRScheduler):
    """The rate multiplied by `coefficient` every step: `lr = initial * coefficient**t`.

    Torch's `MultiplicativeLR(opt, lr_lambda=lambda t: c)` on base rate b equals
    `MultiplicativeLR(opt, b, c)`; a factor that changes with the step has no closed form,
    so cstorch, and this class, take a constant.

    Args:
        optimizer: The optimizer whose learning rates are scheduled.
        initial_learning_rate: The rate at step 0.
        coefficient: The factor per step.

    Example:
        >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> scheduler = MultiplicativeLR(opt, 1.0, coefficient=0.5)
        >>> scheduler.step(2)
        >>> scheduler.get_last_lr()
        [tensor(0.2500)]
    """

    initial_learning_rate: float

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        initial_learning_rate: float,
        coefficient: float,
    ) -> None:
        self.initial_learning_rate = check_rate("initial_learning_rate", initial_learning_rate)
        self.coefficient = check_float("coefficient", coefficient, 0.0)
        super().__init__(optimizer)

    def _get_closed_form_lr(self) -> Tensor:
        return self.initial_learning_rate * self.coefficient ** self._float_epoch()
