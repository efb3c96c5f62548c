"""Streaming quantiles from a fixed-bin histogram, with a guaranteed error bound.

Values in `[low, high]` fall into `num_bins` equal bins (the last one closed). The q-quantile
is the inverted-CDF quantile (numpy's `method="inverted_cdf"`: the smallest value x with a
weighted share >= q of the values at or below x), estimated by linear interpolation inside
the bin where the cumulative weight first reaches `q * total`. That bin holds the true
quantile too, so

    |estimate - true quantile| <= (high - low) / num_bins     (one bin width)

for every q in [0, 1] and any data inside the range, whatever its distribution. Values outside
the range are counted as data errors by the metric (not clamped silently).
"""

from __future__ import annotations

import torch
from torch import Tensor

from torchtally.functional._checks import check_tensor

__all__ = ["histogram_quantiles", "histogram_update"]


def histogram_update(
    values: Tensor, low: float, high: float, num_bins: int, weights: Tensor | None = None
) -> Tensor:
    """`(num_bins,)` float64 weight per bin (values outside `[low, high]` and NaN dropped)."""
    check_tensor("values", values)
    x = values.reshape(-1).to(torch.float64)
    w = torch.ones_like(x) if weights is None else torch.broadcast_to(weights, values.shape)
    w = w.reshape(-1).to(torch.float64)
    inside = torch.logical_and(x >= low, x <= high)
    index = ((x - low) * (num_bins / (high - low))).floor().clamp(0, num_bins - 1).long()
    counts = torch.zeros(num_bins, dtype=torch.float64, device=x.device)
    return counts.scatter_add(0, torch.where(inside, index, 0), torch.where(inside, w, 0.0))


def histogram_quantiles(counts: Tensor, low: float, high: float, q: Tensor) -> Tensor:
    """Quantile estimates (shaped like `q`, float64) from a bin histogram; NaN when empty."""
    num_bins = counts.shape[0]
    width = (high - low) / num_bins
    cumulative = torch.cumsum(counts, 0)
    total = cumulative[-1]
    # The first bin whose cumulative weight reaches q * total (and a non-empty one for q = 0).
    target = (q.to(torch.float64) * total).clamp(min=torch.finfo(torch.float64).tiny)
    target = torch.minimum(target, total)
    b = torch.searchsorted(cumulative, target).clamp(max=num_bins - 1)
    before = torch.where(b > 0, cumulative[(b - 1).clamp(min=0)], 0.0)
    inside = counts[b]
    fraction = torch.where(inside > 0, (target - before) / inside.clamp(min=1e-300), 0.0)
    estimate = low + (b.to(torch.float64) + fraction.clamp(0.0, 1.0)) * width
    return torch.where(total > 0, estimate, float("nan"))
