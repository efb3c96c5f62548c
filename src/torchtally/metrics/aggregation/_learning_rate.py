"""`LearningRateMetric`: the learning rate of the latest optimizer step (Burn's metric)."""

from __future__ import annotations

import contextlib
from typing import final

import torch
from torch import Tensor

from torchtally.metrics._base import Metric

__all__ = ["LearningRateMetric"]


@final
class LearningRateMetric(Metric):
    """The learning rate last passed to `update` (NaN before the first update).

    Learning rates are equal on every rank, so merging keeps the larger (`max` reduction),
    which is that same value.

    Args:
        name: Metric name; defaults to "learning_rate".
        param_group: Which parameter group's rate to read when given an optimizer.

    Example:
        >>> lr = LearningRateMetric()
        >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
        >>> float(lr(opt))
        0.1
    """

    unit = ""
    higher_is_better = None
    input_kind = "learning_rate"

    def __init__(self, name: str | None = None, *, param_group: int = 0) -> None:
        super().__init__(name)
        self.param_group = param_group
        self.register_state(
            "value",
            torch.full((), -torch.inf, dtype=torch.float64),
            reduction="max",
        )

    def update(self, learning_rate: Tensor | float | torch.optim.Optimizer) -> None:
        """Record the current rate: a number, a tensor, or an optimizer to read it from."""
        if isinstance(learning_rate, torch.optim.Optimizer):
            rate = learning_rate.param_groups[self.param_group]["lr"]
            learning_rate = rate if isinstance(rate, Tensor) else float(rate)
        if not isinstance(learning_rate, Tensor | str | bytes):
            # Converted here, not at the boundary: a Python rate such as 0.1 must keep its
            # float64 value, which the default float32 conversion would round.
            with contextlib.suppress(TypeError, ValueError, RuntimeError):  # refused below
                learning_rate = torch.as_tensor(learning_rate, dtype=torch.float64)
        if not isinstance(learning_rate, Tensor):
            raise TypeError(
                "Argument `learning_rate` must be a number, a one-element tensor or an "
                f"optimizer. Received: {type(learning_rate).__name__}"
            )
        if learning_rate.numel() != 1:
            raise ValueError(
                "Argument `learning_rate` must hold exactly one value. "
                f"Received: a tensor of shape {tuple(learning_rate.shape)}"
            )
        if learning_rate.is_complex():
            raise TypeError(
                f"Argument `learning_rate` must be real. Received: dtype={learning_rate.dtype}"
            )
        self.value.copy_(learning_rate.reshape(()).to(torch.float64))

    def compute(self) -> Tensor:
        return torch.where(self.value == -torch.inf, torch.nan, self.value)
