"""Weighted mean and perplexity: both are a weighted sum over a weight total."""

from __future__ import annotations

from typing import cast

import torch
from torch import Tensor

from torchtally.functional._blocks import add_pieces, blocked
from torchtally.functional._checks import check_same_shape, count_negative, count_nonfinite
from torchtally.functional._workspace import float64_scratch, scratch_allowed
from torchtally.functional.regression._fused import common_dtype, constants, under_vmap

__all__ = [
    "add_weighted",
    "mean",
    "mean_compute",
    "mean_update",
    "perplexity",
    "perplexity_update",
    "scalar_weight_mean_update",
    "scalar_weight_sum",
    "scalar_weight_sum_checked",
]


def _sum_to_float64(value: Tensor) -> Tensor:
    """The sum of `value` as a float64 0-d tensor (see `_batch_sum`)."""
    total = _batch_sum(value)
    return total if total.dtype == torch.float64 else total.double()


def _batch_sum(value: Tensor) -> Tensor:
    """The sum of `value` as a float64 0-d tensor.

    Always summed in float64, float32 batches included: a float32 sum overflows where the
    mean is finite (4,096 values of 1e35 sum to inf; +3e38 then -3e38 gives NaN), a silent
    wrong number. float64 holds any sum of float32 values of a batch that fits in memory.

    Eager on CPU, a large contiguous float32 batch is summed in blocks through a reused
    float64 buffer (`sum(dtype=float64)` converts into a fresh batch-sized copy first)."""
    rows = _sum_blocks(value)
    if rows is None:
        return value.sum(dtype=torch.float64)
    return _blocked_sum(value, rows, marked=False)


def _sum_blocks(value: Tensor) -> int | None:
    """Elements per block of a blocked float64 sum of `value`, or None for a plain sum."""
    rows = blocked(value, from_elements=_BLOCK_FROM, block_elements=_BLOCK)
    if (
        rows is None
        or value.dtype != torch.float32
        or not value.is_contiguous()
        or not scratch_allowed(value)
    ):
        return None
    return rows


def _blocked_sum(value: Tensor, rows: int, marked: bool) -> Tensor:
    """The float64 sum of contiguous `value`, `rows` elements at a time through the thread's
    float64 buffer; `marked`: non-finite values replaced by `VALUE_MARK` first."""
    flat = value.view(-1)
    (scratch,) = float64_scratch(1, rows)
    total: Tensor | None = None
    for start in range(0, flat.shape[0], rows):
        block = flat[start : start + rows]
        copy = scratch[: block.shape[0]].copy_(block)
        if marked:
            copy.nan_to_num_(VALUE_MARK, VALUE_MARK, VALUE_MARK)
        piece = copy.sum()
        total = piece if total is None else total.add_(piece)
    assert total is not None  # blocked() never splits an empty batch
    return total


def mean_update(value: Tensor | float, weight: Tensor | float = 1.0) -> tuple[Tensor, Tensor]:
    """Weighted sum and weight total of one batch; `weight` broadcasts to `value`'s shape."""
    value = torch.as_tensor(value)
    if isinstance(weight, (int, float)):
        weighted, weight_total = scalar_weight_mean_update(value, weight)
        return weighted, weighted.new_full((), weight_total)
    weight = torch.as_tensor(weight, device=value.device)
    # A 0-d or same-shaped weight fits without torch.broadcast_shapes (~20 µs of Python).
    fits = weight.dim() == 0 or weight.shape == value.shape
    if not fits and _broadcast_shape(weight.shape, value.shape) != value.shape:
        raise ValueError(
            "Argument `weight` must be a scalar or broadcastable to the shape of `value`. "
            f"Received: weight.shape={tuple(weight.shape)}, value.shape={tuple(value.shape)}"
        )
    if weight.numel() == 1 and value.numel() > 0:
        # One weight for every value (`update(loss, weight=batch_size)`, a Python number the
        # boundary made a tensor): w·Σv and w·N, not an N-sized float64 copy, a broadcast
        # product and a second sum over N weights (1.1 ms -> ~0.1 ms at 2^18 float32 values).
        # An empty batch takes the general path, where an infinite weight still adds 0.
        weight64 = weight.to(torch.float64).reshape(())
        return _sum_to_float64(value) * weight64, weight64 * value.numel()
    if weight.shape == value.shape and value.dim() > 0:
        return _per_value_weights(value, weight)
    # float64 before multiplying: an int64 value above 2**24 is exact in float64, not float32.
    value64 = value.to(torch.float64)
    weight64 = torch.broadcast_to(weight.to(torch.float64), value.shape)
    return (value64 * weight64).sum(), weight64.sum()


#: From this many elements an eager CPU per-value-weight sum works in blocks of `_BLOCK`.
_BLOCK_FROM = 1 << 17
_BLOCK = 1 << 16


def _per_value_weights(value: Tensor, weight: Tensor) -> tuple[Tensor, Tensor]:
    """Σ value·weight and Σ weight in float64 arithmetic, for a weight shaped like `value`.

    One float64 dot product multiplies and sums in one pass with no N-sized product buffer
    (float64 products of float32 operands are exact). Eager on CPU, a large batch goes in
    blocks through reused float64 scratch buffers: two fresh batch-sized float64 copies
    page-fault in on every call (2.3 ms at 2^18 elements, against ~0.2 ms in blocks)."""
    rows = blocked(value, from_elements=_BLOCK_FROM, block_elements=_BLOCK)
    if (
        rows is None
        or not (value.is_contiguous() and weight.is_contiguous())
        or not scratch_allowed(value, weight)
    ):
        value64 = value.to(torch.float64).reshape(-1)
        weight64 = weight.to(torch.float64).reshape(-1)
        return torch.dot(value64, weight64), weight64.sum()
    flat_v, flat_w = value.view(-1), weight.view(-1)
    scratch_v, scratch_w = float64_scratch(2, rows)
    totals: tuple[Tensor, ...] | None = None
    for start in range(0, flat_v.shape[0], rows):
        block = flat_v[start : start + rows]
        size = block.shape[0]
        value64 = scratch_v[:size].copy_(block)
        weight64 = scratch_w[:size].copy_(flat_w[start : start + rows])
        totals = add_pieces(totals, (torch.dot(value64, weight64), weight64.sum()))
    assert totals is not None  # blocked() never splits an empty batch
    weighted, total = totals
    return weighted, total


def scalar_weight_mean_update(value: Tensor, weight: float) -> tuple[Tensor, float]:
    """`mean_update` with a Python weight (the common `update(loss)`): the weighted sum as a
    0-d float64 tensor and the weight total as a Python number (known from the shape, so a
    metric adds it to its state without making a tensor for it).

    One float64 sum of the values scaled once, instead of an N-sized broadcast product and a
    second sum over the weights."""
    total, weight_total = scalar_weight_sum(value, weight)
    return (total if total.dtype == torch.float64 else total.double()), weight_total


def scalar_weight_sum(value: Tensor, weight: float) -> tuple[Tensor, float]:
    """`scalar_weight_mean_update` for a float64 state: the float64 weighted sum and the
    weight total as a Python number."""
    scale = float(weight)
    if scale == 1.0:
        return _batch_sum(value), float(value.numel())
    return _sum_to_float64(value) * scale, value.numel() * scale


def add_weighted(
    totals: Tensor, value: Tensor, weight: Tensor | float, checked: bool
) -> tuple[Tensor | None, Tensor | None]:
    """Add `[Σ w·v, Σ w]` of one batch to `totals` (float64 `(2,)`) in few kernels, for an
    update off the eager CPU path; with `checked`, return the non-finite value and negative
    (or NaN) weight counts (None: that kind cannot occur). The same float64 sums as
    `mean_update`, in another order.

    One `cat` makes the float64 rows `[v, 1]` (`[v, 1, w]` for a weight per value), and one
    matrix-vector product adds both sums to the state: `[v, 1] @ 1` times a Python weight,
    `[v, 1] @ w` for a weight per value.
    """
    nonfinite = count_nonfinite(value) if checked else None
    if under_vmap(totals):
        # Vectorized over replicas (a `BootStrapper`): the in-place products have no batching
        # rule, and a `cat` of the replicas' weights with unbatched rows fixes the batch size
        # of a compiled graph; the plain sums are added instead.
        if isinstance(weight, Tensor):
            weighted_sum, weight_total = mean_update(value, weight)
        else:
            weighted_sum, scalar_total = scalar_weight_mean_update(value, float(weight))
            weight_total = weighted_sum.new_full((), scalar_total)
        totals.add_(torch.stack([weighted_sum, weight_total]))
        negative = count_negative(weight) if checked and isinstance(weight, Tensor) else None
        return nonfinite, negative
    _, one, first, _ = constants(value, torch.float64)
    flat = value.reshape(1, -1)
    size = flat.shape[1]
    if not isinstance(weight, Tensor):
        # The float64 rows [v, 1] in one kernel (a `cat` of mixed dtypes copies per input;
        # the 1 has dimensions, so that it makes the result float64)
        rows = torch.where(first, flat, one.expand(1, 1))
        scale = float(weight)
        if scale != 0.0:
            totals.addmv_(rows, rows[1], alpha=scale)
        else:
            # alpha=0 would not read the product at all (BLAS): Σv·0 keeps NaN·0 = NaN
            totals.add_(torch.mv(rows, rows[1]).mul_(0.0))
        return nonfinite, None
    weight = weight.to(value.device)
    if weight.shape == value.shape and value.dim() > 0:
        # [v, 1, w] in the inputs' dtype (one kernel), then float64 (a `cat` of mixed dtypes
        # would copy per input)
        _, same_one, _, _ = constants(value, common_dtype(value, weight))
        rows = torch.cat([flat, same_one.expand(1, size), weight.reshape(1, -1)]).to(torch.float64)
        totals.addmv_(rows[0:2], rows[2])  # [Σv·w, Σ1·w]
        if not checked:
            return nonfinite, None
        # min(w, 0) is not 0 exactly where `w >= 0` fails: negative or NaN (as count_negative
        # counts, in two kernels instead of three)
        return nonfinite, torch.count_nonzero(rows[2].clamp(max=0.0))
    if weight.numel() == 1 and size > 0 and weight.dim() <= value.dim():
        # One weight for every value: [Σv, N] times w (an empty batch takes the general
        # path, where an infinite weight still adds 0)
        rows = torch.where(first, flat, one.expand(1, 1))
        totals.addcmul_(torch.mv(rows, rows[1]), weight.reshape(()))
    else:
        weighted_sum, weight_total = mean_update(value, weight)
        totals.add_(torch.stack([weighted_sum, weight_total]))
    return nonfinite, count_negative(weight) if checked else None


#: Finite float64 stand-in written over a non-finite float32 value by
#: `scalar_weight_sum_checked`: any float64 sum of float32 values (|x| < 2^128, at most 2^31 of
#: them) stays below 2^159, far under half a unit in the last place of a multiple of the mark,
#: so a sum holding k marks is exactly k marks (in any order), and the count is the sum over
#: the mark, truncated.
VALUE_MARK = 2.0**300


def scalar_weight_sum_checked(value: Tensor, weight: float) -> tuple[Tensor, float, Tensor | None]:
    """`scalar_weight_sum` and the `count_nonfinite` of `value`.

    Eager on CPU, for a large contiguous float32 batch, in one pass per block instead of two
    over the batch: each block's float64 copy (a reused cache-sized buffer, where the sum
    converts a fresh batch-sized copy) has its non-finite entries replaced by `VALUE_MARK`,
    and the block sums count them. A batch with a non-finite value then adds a finite,
    meaningless sum, never read: its count makes `compute` raise. Elsewhere, the sum and
    `count_nonfinite`."""
    rows = _sum_blocks(value)
    if rows is None:
        total, weight_total = scalar_weight_sum(value, weight)
        return total, weight_total, count_nonfinite(value)
    marked = _blocked_sum(value, rows, marked=True)
    bad = (marked * (1.0 / VALUE_MARK)).to(torch.int64)
    scale = float(weight)
    total = marked if scale == 1.0 else marked * scale
    return total, value.numel() * scale, bad


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
