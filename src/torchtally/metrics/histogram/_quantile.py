"""`QuantileMetric`: streaming quantiles of a value in constant memory."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import final

import torch
from torch import Tensor

from torchtally._errors import ErrorKinds, check_int
from torchtally.functional._checks import check_broadcastable_to, count_negative
from torchtally.functional.histogram._histogram import histogram_quantiles, histogram_update
from torchtally.metrics._base import Metric

__all__ = ["QuantileMetric"]


@final
class QuantileMetric(Metric):
    """Quantiles (and the histogram) of every value seen, from `num_bins` fixed bins over
    `[low, high]`: constant memory, one `scatter_add` per update, exactly additive.

    Error bound: each estimate is within `error_bound = (high - low) / num_bins` of the exact
    inverted-CDF quantile (numpy's `method="inverted_cdf"`) of the values seen, for any data
    inside the range (see `torchtally.functional.histogram`). Values outside it, or NaN, are
    data errors raised at compute.

    Args:
        low: Lower end of the range.
        high: Upper end of the range (> low).
        quantiles: The q's to report, in [0, 1].
        num_bins: Bins (>= 1); the bound shrinks as 1 / num_bins.
        name: Metric name; defaults to "quantile_metric".
        check_values: Count values outside the range or NaN, and negative weights.

    Example:
        >>> metric = QuantileMetric(0.0, 1.0, quantiles=(0.5, 0.9), num_bins=1000)
        >>> estimate = metric(torch.linspace(0, 1, 1001))  # exact quantiles: 0.5, 0.9
        >>> bool((estimate - torch.tensor([0.5, 0.9])).abs().max() <= metric.error_bound)
        True
    """

    unit = ""
    higher_is_better = None
    input_kind = "values"
    error_kinds = ErrorKinds(
        values_outside="values outside [low, high] or NaN",
        negative_weights="negative weights",
    )

    def __init__(
        self,
        low: float,
        high: float,
        quantiles: Sequence[float] = (0.5,),
        num_bins: int = 1024,
        name: str | None = None,
        *,
        check_values: bool = True,
    ) -> None:
        if not (math.isfinite(low) and math.isfinite(high) and high > low):
            raise ValueError(
                "Arguments `low` and `high` must be finite with high > low. "
                f"Received: low={low!r}, high={high!r}"
            )
        levels = tuple(float(q) for q in quantiles)
        if not levels or any(not 0 <= q <= 1 for q in levels):
            raise ValueError(
                f"Argument `quantiles` must be values in [0, 1]. Received: quantiles={quantiles!r}"
            )
        check_int("num_bins", num_bins, 1)
        super().__init__(name, check_values=check_values)
        self.low, self.high, self.num_bins, self.quantiles = (
            float(low),
            float(high),
            num_bins,
            levels,
        )
        self.register_state("counts", torch.zeros(num_bins, dtype=torch.float64))

    @property
    def error_bound(self) -> float:
        """The largest possible |estimate - exact quantile|: one bin width."""
        return (self.high - self.low) / self.num_bins

    def update(self, values: Tensor, weights: Tensor | None = None) -> None:
        """Add values (any shape) with optional weights broadcastable to them."""
        if isinstance(weights, Tensor) and isinstance(values, Tensor):
            check_broadcastable_to("weights", weights, "values", values)
        self.counts.add_(histogram_update(values, self.low, self.high, self.num_bins, weights))
        if self.check_values:
            # NaN compares False both ways, so it is counted apart from the out-of-range values.
            outside = torch.logical_or(values < self.low, values > self.high)
            bad = torch.count_nonzero(torch.logical_or(outside, values != values))
            self.record_errors(values_outside=bad, negative_weights=count_negative(weights))

    def compute(self) -> Tensor:
        q = torch.tensor(self.quantiles, dtype=torch.float64, device=self.counts.device)
        return histogram_quantiles(self.counts, self.low, self.high, q)

    def histogram(self) -> dict[str, Tensor]:
        """`edges` `(num_bins + 1,)` and `counts` `(num_bins,)` (summed weights)."""
        with self.synced():
            edges = torch.linspace(self.low, self.high, self.num_bins + 1, dtype=torch.float64)
            return {"edges": edges.to(self.counts.device), "counts": self.counts.clone()}
