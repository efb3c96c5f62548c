"""`torchmetrics.wrappers.minmax`: `MinMaxMetric`, a metric's value with the smallest and
largest values it took at `compute`."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from torchtally.compat.torchmetrics._base import Metric
from torchtally.compat.torchmetrics.wrappers.abstract import WrapperMetric

__all__ = ["MinMaxMetric"]


class MinMaxMetric(WrapperMetric):
    """TorchMetrics' `MinMaxMetric`: `compute` returns `{"raw": value, "max": ..., "min": ...}`,
    the extremes over every `compute` since construction or `reset` (a scalar value only).

    Raises:
        ValueError: `base_metric` is not a metric.
        RuntimeError: (at `compute`) the base metric's value is not a scalar.
    """

    def __init__(self, base_metric: Metric, **kwargs: Any) -> None:
        if not isinstance(base_metric, Metric):
            raise ValueError(
                "Expected base metric to be an instance of `torchmetrics.Metric` but received "
                f"{base_metric}"
            )
        super().__init__(**kwargs)
        self._base_metric = base_metric
        self.min_val = torch.tensor(float("inf"))
        self.max_val = torch.tensor(float("-inf"))

    def update(self, *args: Any, **kwargs: Any) -> None:
        self._base_metric.update(*args, **kwargs)

    def compute(self) -> dict[str, Tensor]:
        # compute only: the comparison with the extremes so far is a host read
        value = self._base_metric.compute()
        if not (
            isinstance(value, (int, float)) or (isinstance(value, Tensor) and value.numel() == 1)
        ):
            raise RuntimeError(
                "Returned value from base metric should be a float or scalar tensor, but got "
                f"{value}."
            )
        value = torch.as_tensor(value)
        high, low = self.max_val.to(value.device), self.min_val.to(value.device)
        self.max_val = value if bool(high < value) else high
        self.min_val = value if bool(low > value) else low
        return {"raw": value, "max": self.max_val, "min": self.min_val}

    @torch.jit.unused
    def forward(self, *args: Any, **kwargs: Any) -> dict[str, Tensor]:
        """`compute` on this batch alone, as TorchMetrics' `forward` leaves it: the base
        metric then holds this batch only, and the extremes take its value into account."""
        self._base_metric.reset()
        self._base_metric.update(*args, **kwargs)
        return self.compute()

    def reset(self) -> None:
        self.min_val = torch.tensor(float("inf"))
        self.max_val = torch.tensor(float("-inf"))
        self._base_metric.reset()
