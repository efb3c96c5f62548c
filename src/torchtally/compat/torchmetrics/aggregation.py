"""TorchMetrics 1.9's aggregation metrics on torchtally (float64 running state, no host sync).

`nan_strategy`: "error" counts NaNs during `update` and raises at `compute` (never a host read
in `update`); "warn" and "ignore" both drop NaN values (no warning: a warning would need to read
the data on the host); "disable" keeps them; a float replaces them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor

from torchtally._errors import ErrorKinds
from torchtally.compat.torchmetrics._base import Metric, _Batch

__all__ = ["MaxMetric", "MeanMetric", "MinMetric", "RunningMean", "RunningSum", "SumMetric"]

_STRATEGIES = ("error", "warn", "ignore", "disable")


def _float64(values: Any, device: torch.device) -> Tensor:
    """`values` as a float64 tensor on `device`. A Python number (the default `weight=1.0`) is
    filled in there: a tensor made from host data and copied to a GPU would synchronize."""
    if isinstance(values, (int, float)):
        return torch.full((), float(values), dtype=torch.float64, device=device)
    return torch.as_tensor(values, dtype=torch.float64, device=device)


def _check_strategy(nan_strategy: Any) -> str | float:
    if nan_strategy in _STRATEGIES or (
        isinstance(nan_strategy, float) and not isinstance(nan_strategy, bool)
    ):
        return nan_strategy  # type: ignore[no-any-return]
    raise ValueError(
        f"Argument `nan_strategy` must be one of {_STRATEGIES} or a float. "
        f"Received: nan_strategy={nan_strategy!r}"
    )


class _Aggregator(Metric):
    error_kinds = ErrorKinds(nan_values="NaN values (nan_strategy='error')")
    is_differentiable = None
    higher_is_better = None

    def __init__(self, nan_strategy: str | float = "warn", **kwargs: Any) -> None:
        strategy = _check_strategy(nan_strategy)
        super().__init__(**kwargs)
        self.nan_strategy = strategy

    def _clean(self, value: Any, weight: Any = None) -> tuple[Tensor, Tensor, Tensor]:
        """Float64 values, weights broadcast to them (0 where a value is dropped), NaN count."""
        value = _float64(value, self.update_counter.device)
        weight = (
            torch.ones_like(value)
            if weight is None
            else _float64(weight, value.device).broadcast_to(value.shape)
        )
        nan = value.isnan() | weight.isnan()
        if isinstance(self.nan_strategy, float):
            value = torch.where(value.isnan(), self.nan_strategy, value)
            weight = torch.where(weight.isnan(), self.nan_strategy, weight)
        elif self.nan_strategy != "disable":
            value = torch.where(nan, 0.0, value)
            weight = torch.where(nan, 0.0, weight)
        return value, weight, nan

    def _with_errors(self, batch: dict[str, Any], nan: Tensor) -> dict[str, Any]:
        if self.nan_strategy == "error":
            batch["_errors"] = {"nan_values": nan.sum()}
        return batch


class SumMetric(_Aggregator):
    """TorchMetrics' `SumMetric`: the sum of every value seen."""

    def __init__(self, nan_strategy: str | float = "warn", **kwargs: Any) -> None:
        super().__init__(nan_strategy, **kwargs)
        self.register_state("sum_value", torch.zeros((), dtype=torch.float64), False, "sum")

    def _batch(self, value: Any) -> dict[str, Tensor]:
        value, weight, nan = self._clean(value)
        kept = torch.where(weight == 0, 0.0, value)
        return self._with_errors({"sum_value": kept.sum()}, nan)

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        return state["sum_value"].to(torch.get_default_dtype())


class MeanMetric(_Aggregator):
    """TorchMetrics' `MeanMetric`: `update(value, weight=1.0)`, the weighted mean."""

    def __init__(self, nan_strategy: str | float = "warn", **kwargs: Any) -> None:
        super().__init__(nan_strategy, **kwargs)
        self.register_state("mean_value", torch.zeros((), dtype=torch.float64), False, "sum")
        self.register_state("weight", torch.zeros((), dtype=torch.float64), False, "sum")

    def _batch(self, value: Any, weight: Any = 1.0) -> dict[str, Tensor]:
        value, weights, nan = self._clean(value, weight)
        batch = {"mean_value": (value * weights).sum(), "weight": weights.sum()}
        return self._with_errors(batch, nan)

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        return (state["mean_value"] / state["weight"]).to(torch.get_default_dtype())


class _Extreme(_Aggregator):
    reduction: str = "max"

    def __init__(self, nan_strategy: str | float = "warn", **kwargs: Any) -> None:
        super().__init__(nan_strategy, **kwargs)
        start = float("-inf") if self.reduction == "max" else float("inf")
        self.register_state(
            "value",
            torch.full((), start, dtype=torch.float64),
            False,
            self.reduction,  # type: ignore[arg-type]
        )

    def _batch(self, value: Any) -> dict[str, Tensor]:
        value, weight, nan = self._clean(value)
        neutral = float("-inf") if self.reduction == "max" else float("inf")
        value = torch.where(weight == 0, neutral, value).reshape(-1)
        extreme = value.max() if self.reduction == "max" else value.min()
        if value.numel() == 0:
            extreme = torch.full((), neutral, dtype=torch.float64, device=value.device)
        return self._with_errors({"value": extreme}, nan)

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        return state["value"].to(torch.get_default_dtype())


class MaxMetric(_Extreme):
    """TorchMetrics' `MaxMetric`: the largest value seen (-inf before any update)."""

    reduction = "max"


class MinMetric(_Extreme):
    """TorchMetrics' `MinMetric`: the smallest value seen (inf before any update)."""

    reduction = "min"


class RunningMean(_Aggregator):
    """TorchMetrics' `RunningMean`: the mean over the last `window` updates.

    The last `window` updates' sums and weights live in a preallocated ring buffer, written at
    `num_updates % window` with a scatter, so the update never grows or reads state.
    """

    def __init__(self, window: int = 5, nan_strategy: str | float = "warn", **kwargs: Any) -> None:
        if not isinstance(window, int) or isinstance(window, bool) or window < 1:
            raise ValueError(
                f"Argument `window` must be an integer >= 1. Received: window={window!r}"
            )
        super().__init__(nan_strategy, **kwargs)
        self.window = window
        self.register_state("sums", torch.zeros(window, dtype=torch.float64), False, "sum")
        self.register_state("weights", torch.zeros(window, dtype=torch.float64), False, "sum")

    def _batch(self, value: Any) -> dict[str, Tensor]:
        value, weight, nan = self._clean(value)
        batch = {"sums": (value * weight).sum().reshape(1), "weights": weight.sum().reshape(1)}
        return self._with_errors(batch, nan)

    def _fold(self, batch: Mapping[str, Any]) -> None:
        # Overwrite the oldest slot (a scatter at a tensor index), evicting it exactly even
        # when it held a NaN or an infinity.
        slot = torch.remainder(self.update_counter, self.window).reshape(1)
        self.sums.index_copy_(0, slot, batch["sums"])
        self.weights.index_copy_(0, slot, batch["weights"])
        if "_errors" in batch:
            self.record_errors(**batch["_errors"])

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Update, and return the mean of this batch alone (as TorchMetrics' RunningMean)."""
        batch = _Batch(self._batch(*args, **kwargs))
        self.update(batch)
        self.check_errors()
        return (batch["sums"] / batch["weights"]).reshape(()).to(torch.get_default_dtype())

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        return (state["sums"].sum() / state["weights"].sum()).to(torch.get_default_dtype())


class RunningSum(RunningMean):
    """TorchMetrics' `RunningSum`: the sum over the last `window` updates (the same
    preallocated ring as `RunningMean`)."""

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Update, and return the sum of this batch alone (as TorchMetrics' RunningSum)."""
        batch = _Batch(self._batch(*args, **kwargs))
        self.update(batch)
        self.check_errors()
        return batch["sums"].reshape(()).to(torch.get_default_dtype())

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        return state["sums"].sum().to(torch.get_default_dtype())
