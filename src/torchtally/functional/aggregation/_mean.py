"""Weighted mean and perplexity: both are a weighted sum over a weight total."""

from __future__ import annotations

from typing import cast

import torch
from torch import Tensor

from torchtally.functional._blocks import eager_at_least
from torchtally.functional._checks import check_same_shape

__all__ = [
    "mean",
    "mean_compute",
    "mean_update",
    "perplexity",
    "perplexity_update",
    "scalar_weight_mean_update",
    "scalar_weight_sum",
]


def _sum_to_float64(value: Tensor) -> Tensor:
    """The sum of `value` as a float64 0-d tensor (see `_batch_sum`)."""
    total = _batch_sum(value)
    return total if total.dtype == torch.float64 else total.double()


def _batch_sum(value: Tensor) -> Tensor:
    """The sum of `value` as a 0-d tensor at float64 accuracy or (large float32 batches)
    float32's, which a float64 state widens exactly as it adds it (no op for the widening).

    float32 is summed in float32 (CPU and CUDA sum pairwise, so the error stays near float32
    rounding of the result, the precision `MeanMetric` returns): a float64 sum of float32
    values converts a float64 copy of the whole batch first (4x the time at 2^18 elements).
    Small batches (a one-number loss) and other dtypes (float16's small range, integers) sum
    in float64, in one op."""
    if value.dtype == torch.float32 and eager_at_least(value, 4096):
        return value.sum()
    return value.sum(dtype=torch.float64)


def mean_update(value: Tensor | float, weight: Tensor | float = 1.0) -> tuple[Tensor, Tensor]:
    """Weighted sum and weight total of one batch; `weight` broadcasts to `value`'s shape."""
    value = torch.as_tensor(value)
    if isinstance(weight, (int, float)):
        weighted, weight_total = scalar_weight_mean_update(value, weight)
        return weighted, weighted.new_full((), weight_total)
    weight = torch.as_tensor(weight, device=value.device)
    if _broadcast_shape(weight.shape, value.shape) != value.shape:
        raise ValueError(
            "Argument `weight` must be a scalar or broadcastable to the shape of `value`. "
            f"Received: weight.shape={tuple(weight.shape)}, value.shape={tuple(value.shape)}"
        )
    # float64 before multiplying: an int64 value above 2**24 is exact in float64, not float32.
    value64 = value.to(torch.float64)
    weight64 = torch.broadcast_to(weight.to(torch.float64), value.shape)
    return (value64 * weight64).sum(), weight64.sum()


def scalar_weight_mean_update(value: Tensor, weight: float) -> tuple[Tensor, float]:
    """`mean_update` with a Python weight (the common `update(loss)`): the weighted sum as a
    0-d float64 tensor and the weight total as a Python number (known from the shape, so a
    metric adds it to its state without making a tensor for it).

    One float64 sum of the values scaled once, instead of an N-sized broadcast product and a
    second sum over the weights."""
    total, weight_total = scalar_weight_sum(value, weight)
    return (total if total.dtype == torch.float64 else total.double()), weight_total


def scalar_weight_sum(value: Tensor, weight: float) -> tuple[Tensor, float]:
    """`scalar_weight_mean_update` for a float64 state: the weighted sum may be a float32
    0-d tensor (a large float32 batch with weight 1, summed in float32), which the state's
    `add_` widens exactly, one op fewer than widening it here."""
    scale = float(weight)
    if scale == 1.0:
        return _batch_sum(value), float(value.numel())
    return _sum_to_float64(value) * scale, value.numel() * scale


def _broadcast_shape(a: torch.Size, b: torch.Size) -> torch.Size | None:
    try:
        return cast(torch.Size, torch.broadcast_shapes(a, b))
    except RuntimeError:
        return None


def mean_compute(weighted_sum: Tensor, weight_total: Tensor) -> Tensor:
    """Weighted sum over weight total; NaN when no weight was seen."""
    return weighted_sum / weight_total


def mean(value: Tensor, weight: Tensor | float = 1.0) -> Tensor:
    """Weighted mean of every element of `value`.

    Args:
        value: Values of any shape.
        weight: A scalar or a tensor broadcastable to `value`.

    Returns:
        A 0-d float64 tensor.

    Example:
        >>> mean(torch.tensor([1.0, 3.0]), torch.tensor([3.0, 1.0]))
        tensor(1.5000, dtype=torch.float64)
    """
    return mean_compute(*mean_update(value, weight))


def perplexity_update(
    labels: Tensor, loss: Tensor, weights: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    """Summed token loss and token count of one batch (cstorch's PerplexityMetric inputs).

    `loss` is the batch's loss summed over its tokens; the tokens are the elements of `labels`,
    or with `weights` the number of positive weights.
    """
    total_loss = loss.to(torch.float64).sum()
    if weights is None:
        return total_loss, labels.new_full((), labels.numel(), dtype=torch.float64)
    check_same_shape("labels", labels, "weights", weights)
    return total_loss, (weights > 0).sum(dtype=torch.float64)


def perplexity(labels: Tensor, loss: Tensor, weights: Tensor | None = None) -> Tensor:
    """exp(summed token loss / token count).

    Example:
        >>> perplexity(torch.zeros(4, dtype=torch.long), torch.tensor(4 * 0.6931471805599453))
        tensor(2.0000, dtype=torch.float64)
    """
    return torch.exp(mean_compute(*perplexity_update(labels, loss, weights)))
