"""`LearningRateMetric`: the learning rate of the latest optimizer step (Burn's metric)."""

from __future__ import annotations

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
            learning_rate = learning_rate.param_groups[self.param_group]["lr"]
        self.value.copy_(torch.as_tensor(learning_rate, dtype=torch.float64))

    def compute(self) -> Tensor:
        return torch.where(self.value == -torch.inf, torch.nan, self.value)
