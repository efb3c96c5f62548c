"""TorchMetrics 1.9's aggregation metrics on torchtally (float64 running state, no host sync).

`nan_strategy`: "error" counts NaNs during `update` and raises at `forward` / `compute` (never a
host read in `update`); "warn" and "ignore" both drop NaN values, "warn" warning at the next
`forward` or `compute` (which read the count on the host; `update` does not); "disable" keeps
them; a float replaces them.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor

from torchtally._errors import ErrorKinds, MetricValueError, tracing, user_stacklevel
from torchtally.compat.torchmetrics._base import Metric, _Batch
from torchtally.functional.aggregation import mean_compute, mean_update

__all__ = [
    "CatMetric",
    "MaxMetric",
    "MeanMetric",
    "MinMetric",
    "RunningMean",
    "RunningSum",
    "SumMetric",
]

#: Values `CatMetric` stores unless `capacity` says otherwise.
DEFAULT_CAPACITY = 1 << 16

_STRATEGIES = ("error", "warn", "ignore", "disable")


def _float64(values: Any, device: torch.device) -> Tensor:
    """`values` as a float64 tensor on `device`. A Python number (the default `weight=1.0`) is
    filled in there: a tensor made from host data and copied to a GPU would synchronize."""
    if isinstance(values, (int, float)):
        return torch.full((), float(values), dtype=torch.float64, device=device)
    return torch.as_tensor(values, dtype=torch.float64, device=device)


def _check_strategy(nan_strategy: Any) -> str | float:
    if (isinstance(nan_strategy, str) and nan_strategy in _STRATEGIES) or (
        isinstance(nan_strategy, float) and not isinstance(nan_strategy, bool)
    ):
        return nan_strategy
    raise ValueError(
        f"Arg `nan_strategy` should either be a float or one of {_STRATEGIES} but got "
        f"{nan_strategy}. (Argument `nan_strategy` must be one of {_STRATEGIES} or a float. "
        f"Received: nan_strategy={nan_strategy!r})"
    )


def _one_weight(weight: Any) -> bool:
    """Whether `weight` is one finite Python number for every value."""
    return (
        isinstance(weight, (int, float)) and not isinstance(weight, bool) and math.isfinite(weight)
    )


class NaNValuesError(MetricValueError, RuntimeError):
    """NaN values reached an aggregator with `nan_strategy="error"` (a `RuntimeError`, as
    TorchMetrics raises, and a `MetricValueError`, as every data error here)."""


class _Aggregator(Metric):
    error_kinds = ErrorKinds(nan_values="NaN values (nan_strategy='error')")
    is_differentiable = None
    higher_is_better = None

    def __init__(self, nan_strategy: str | float = "warn", **kwargs: Any) -> None:
        strategy = _check_strategy(nan_strategy)
        super().__init__(**kwargs)
        self.nan_strategy = strategy
        # NaN values dropped under "warn": counted in `update`, warned about when `forward`
        # or `compute` read the count.
        self.register_internal_state("_nan_seen", torch.zeros((), dtype=torch.int64))
        self._nan_warned = 0

    def persistent(self, mode: bool = False) -> _Aggregator:
        super().persistent(mode)
        self._non_persistent_buffers_set.add("_nan_seen")  # bookkeeping, not a state
        return self

    def check_errors(self) -> None:
        try:
            super().check_errors()
        except MetricValueError as error:
            if self.nan_strategy == "error" and "NaN values" in str(error):
                raise NaNValuesError(
                    f"Encountered `nan` values in tensor: {type(self).__name__} saw NaN values "
                    "with nan_strategy='error' (use 'ignore', 'warn', 'disable' or a float to "
                    f"replace them). {error}"
                ) from None
            raise
        if self.nan_strategy == "warn" and not tracing(self._nan_seen):
            seen = int(self._nan_seen)
            if seen > self._nan_warned:
                warnings.warn(
                    f"Encountered `nan` values in tensor. Will be removed. ({seen - self._nan_warned} "
                    f"NaN values dropped by {type(self).__name__}.)",
                    UserWarning,
                    stacklevel=user_stacklevel(),
                )
            self._nan_warned = seen

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
            # TorchMetrics: where the value or its weight is NaN, the value becomes the
            # strategy's number with weight 1
            value = torch.where(nan, self.nan_strategy, value)
            weight = torch.where(nan, 1.0, weight)
        elif self.nan_strategy != "disable":
            value = torch.where(nan, 0.0, value)
            weight = torch.where(nan, 0.0, weight)
        return value, weight, nan

    def _with_errors(self, batch: dict[str, Any], nan: Tensor) -> dict[str, Any]:
        if self.nan_strategy == "error":
            batch["_errors"] = {"nan_values": nan.sum()}
        elif self.nan_strategy == "warn":
            batch["_nan_seen"] = nan.sum()
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
    """TorchMetrics' `MeanMetric`: `update(value, weight=1.0)`, the weighted mean
    (`torchtally.functional.aggregation.mean_update` / `mean_compute` on the values and weights
    left after `nan_strategy`)."""

    def __init__(self, nan_strategy: str | float = "warn", **kwargs: Any) -> None:
        super().__init__(nan_strategy, **kwargs)
        self.register_state("mean_value", torch.zeros((), dtype=torch.float64), False, "sum")
        self.register_state("weight", torch.zeros((), dtype=torch.float64), False, "sum")

    def _batch(self, value: Any, weight: Any = 1.0) -> dict[str, Tensor]:
        value, weights, nan = self._clean(value, weight)
        if _one_weight(weight) and isinstance(self.nan_strategy, str):
            # One weight for every value (the default): the native sum of the values times
            # it, the float64 sum TorchMetrics' `mean` equals bit for bit; the values that
            # `nan_strategy` dropped carry no weight.
            weighted_sum, _ = mean_update(value, float(weight))
            kept = value.new_full((), float(value.numel()))
            if isinstance(self.nan_strategy, str) and self.nan_strategy != "disable":
                kept = kept - nan.sum()
            weight_total = kept * float(weight)
        else:
            weighted_sum, weight_total = mean_update(value, weights)
        return self._with_errors({"mean_value": weighted_sum, "weight": weight_total}, nan)

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        return mean_compute(state["mean_value"], state["weight"]).to(torch.get_default_dtype())


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
        weighted_sum, weight_total = mean_update(value, weight)
        batch = {"sums": weighted_sum.reshape(1), "weights": weight_total.reshape(1)}
        return self._with_errors(batch, nan)

    def _fold(self, batch: Mapping[str, Any]) -> None:
        # Overwrite the oldest slot (a scatter at a tensor index), evicting it exactly even
        # when it held a NaN or an infinity.
        slot = torch.remainder(self.update_counter, self.window).reshape(1)
        self.sums.index_copy_(0, slot, batch["sums"])
        self.weights.index_copy_(0, slot, batch["weights"])
        if "_errors" in batch:
            self.record_errors(**batch["_errors"])
        if "_nan_seen" in batch:
            self._nan_seen.add_(batch["_nan_seen"])

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Update, and return the mean of this batch alone (as TorchMetrics' RunningMean)."""
        batch = _Batch(self._batch(*args, **kwargs))
        self.update(batch)
        self.check_errors()
        mean = mean_compute(batch["sums"], batch["weights"])
        return mean.reshape(()).to(torch.get_default_dtype())

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        mean = mean_compute(state["sums"].sum(), state["weights"].sum())
        return mean.to(torch.get_default_dtype())


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


class CatMetric(_Aggregator):
    """TorchMetrics' `CatMetric`: every value seen, concatenated along the first dimension.

    The values go into a buffer preallocated at construction (`capacity` values; a clear
    error at `compute` when more arrived) instead of TorchMetrics' growing list, flattened,
    with each update's shape beside them: `compute` gives TorchMetrics' result, the updates
    concatenated along their first dimension (a 0-d value is one row), or the kept values
    flattened when "ignore" / "warn" dropped NaN values (TorchMetrics' masking flattens).
    Dropped values stay in the buffer and are masked out at `compute` (no data-dependent
    shapes in `update`).

    Args:
        nan_strategy: As the other aggregators.
        capacity: How many values (and updates) the buffers hold (default 65,536).
    """

    #: Dimensions of an update's value recorded beyond the first (more are refused).
    _MAX_TRAILING = 6

    def __init__(
        self,
        nan_strategy: str | float = "warn",
        capacity: int = DEFAULT_CAPACITY,
        **kwargs: Any,
    ) -> None:
        if not isinstance(capacity, int) or isinstance(capacity, bool) or capacity < 1:
            raise ValueError(
                f"Argument `capacity` must be an integer >= 1. Received: capacity={capacity!r}"
            )
        super().__init__(nan_strategy, **kwargs)
        self.capacity = capacity
        self.register_state("value", torch.zeros(capacity, dtype=torch.float64), False, "cat")
        self.register_state("kept", torch.zeros(capacity, dtype=torch.bool), False, "cat")
        # per update: its value count and the sizes of its dimensions after the first
        # (-1 past its last one)
        width = 1 + self._MAX_TRAILING
        self.register_state("shapes", torch.zeros(capacity, width, dtype=torch.int64), False, "cat")

    def _batch(self, value: Any) -> dict[str, Tensor]:
        value, weight, nan = self._clean(value)
        trailing = value.shape[1:]
        if len(trailing) > self._MAX_TRAILING:
            raise ValueError(
                f"Argument `value` must have at most {self._MAX_TRAILING + 1} dimensions. "
                f"Received: shape {tuple(value.shape)}"
            )
        kept = weight.reshape(-1) != 0
        if self.nan_strategy == "disable" or isinstance(self.nan_strategy, float):
            kept = torch.ones_like(kept)
        # Filled on the device with Python ints (static shapes): no host tensor to copy.
        shape = torch.full((1, 1 + self._MAX_TRAILING), -1, dtype=torch.int64, device=value.device)
        shape[0, 0] = value.numel()
        for index, size in enumerate(trailing):
            shape[0, 1 + index] = size
        batch = {"value": value.reshape(-1), "kept": kept, "shapes": shape}
        return self._with_errors(batch, nan)

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        # compute only: the kept values are a data-dependent selection (host reads)
        kept = state["kept"]
        values = state["value"][kept].to(torch.get_default_dtype())
        shapes = state["shapes"]
        shapes = shapes[shapes[:, 0] > 0]  # TorchMetrics keeps no empty update
        if shapes.shape[0] == 0 or not bool(kept.all()):
            return values
        trailing = shapes[:, 1:]
        if not bool((trailing == trailing[:1]).all()):
            raise ValueError(
                "CatMetric's updates must agree in every dimension but the first to be "
                f"concatenated. Received: trailing sizes {trailing.tolist()}"
            )
        sizes = [int(size) for size in trailing[0].tolist() if size >= 0]
        return values.reshape(-1, *sizes) if sizes else values
