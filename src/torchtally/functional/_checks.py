"""Input checks shared by the functionals.

Shape, dtype and argument checks raise at call time (they only look at metadata). Checks that
need the data return a 0-d count tensor instead, which metrics accumulate and raise at compute.
"""

from __future__ import annotations

import torch
from torch import Tensor

from torchtally.functional._blocks import blocked, eager_at_least

__all__ = [
    "ErrorCounts",
    "check_broadcastable_to",
    "check_same_shape",
    "check_tensor",
    "count_negative",
    "count_nonfinite",
    "count_nonfinite_rows",
    "count_outside",
]

#: Data-error counts of one batch by kind name (a key of the metric's `error_kinds`); None or
#: a missing key: that kind cannot occur in the batch. A metric adds them with
#: `record_errors(**counts)`.
ErrorCounts = dict[str, Tensor | None]

#: Floating dtype -> the integer dtype of the same width (a bit view for counting).
_SAME_WIDTH_INTS = {
    torch.float64: torch.int64,
    torch.float32: torch.int32,
    torch.float16: torch.int16,
    torch.bfloat16: torch.int16,
}
#: From this many elements a non-finite count sums (see count_nonfinite).
_COUNT_BY_SUM_FROM = 1 << 16
#: Dtypes whose sum of up to `_SUMMED_EXACTLY_UP_TO` zeros and ones is exact.
_SUMMED_EXACTLY = (torch.float32, torch.float64)
_SUMMED_EXACTLY_UP_TO = 1 << 24
#: Below this many elements the extra view dispatch costs more than the faster count saves.
_COUNT_BITS_FROM = 4096
#: 0-d CPU ones per summed dtype: the `1 +` of `1 + 0 * x` (a 0-d operand keeps x's dtype).
_ONES = {dtype: torch.ones((), dtype=dtype) for dtype in _SUMMED_EXACTLY}


def check_tensor(name: str, value: object) -> Tensor:
    """Return `value` if it is a tensor, else raise naming the argument."""
    if not isinstance(value, Tensor):
        raise TypeError(
            f"Argument `{name}` must be a torch.Tensor. Received: {type(value).__name__}"
        )
    return value


def check_same_shape(name_a: str, a: Tensor, name_b: str, b: Tensor) -> None:
    """Raise unless `a` and `b` have the same shape."""
    if a.shape != b.shape:
        raise ValueError(
            f"Arguments `{name_a}` and `{name_b}` must have the same shape. "
            f"Received: {name_a}.shape={tuple(a.shape)}, {name_b}.shape={tuple(b.shape)}"
        )


def check_broadcastable_to(name: str, value: Tensor, target_name: str, target: Tensor) -> None:
    """Raise unless `value` broadcasts to `target`'s shape without changing it (a `(N, 1)`
    weight against `(N,)` values would otherwise silently make an `(N, N)` product)."""
    try:
        fits = torch.broadcast_shapes(value.shape, target.shape) == target.shape
    except RuntimeError:
        fits = False
    if not fits:
        raise ValueError(
            f"Argument `{name}` must be a scalar or broadcastable to the shape of "
            f"`{target_name}`. Received: {name}.shape={tuple(value.shape)}, "
            f"{target_name}.shape={tuple(target.shape)}"
        )


def count_outside(values: Tensor, low: int, high: int) -> Tensor:
    """Number of entries outside `[low, high)`, or (floating values) not a whole number:
    class indices, where 0.5 names no class (a 0-d int64 tensor). NaN is left to the
    non-finite count of the value checks."""
    if values.dtype in (torch.int64, torch.int32) and low < high:
        # An entry is outside iff clamping moves it: three ops where two compares, an `or`
        # and the count take four (and one pass less over the batch).
        return torch.count_nonzero(values.clamp(low, high - 1) != values)
    # count_nonzero counts a bool mask directly; .sum() would first copy it to int64
    outside = torch.logical_or(values < low, values >= high)
    if values.is_floating_point():
        fractional = torch.logical_and(values != values.trunc(), values == values)  # not NaN
        outside = torch.logical_or(outside, fractional)
    return torch.count_nonzero(outside)


def count_nonfinite(values: Tensor) -> Tensor | None:
    """Number of NaN or infinite entries; None for integer tensors, which cannot hold them."""
    if not values.is_floating_point():
        return None
    if not torch.compiler.is_compiling() and values.numel() < _COUNT_BITS_FROM:
        # A small eager batch: the two ops of `_count_nonfinite_piece` without the Python of
        # the size switches (1.7 µs, about what the ops cost at batch 64). Not in a graph,
        # where the size test would be a guard.
        return torch.count_nonzero(values - values)
    rows = blocked(values)
    if rows is not None and values.is_contiguous():
        # Eager CPU, a large batch: count block by block, so that the difference below is a
        # cache-sized buffer reused by every block instead of a batch-sized fresh allocation.
        flat = values.view(-1)
        total = _count_nonfinite_piece(flat[:rows])
        for start in range(rows, flat.shape[0], rows):
            total.add_(_count_nonfinite_piece(flat[start : start + rows]))
        return total
    return _count_nonfinite_piece(values)


def _count_nonfinite_piece(values: Tensor) -> Tensor:
    if (
        eager_at_least(values, _COUNT_BY_SUM_FROM)
        and values.numel() <= _SUMMED_EXACTLY_UP_TO
        and values.dtype in _SUMMED_EXACTLY
    ):
        # 1 + 0 * x is 1 for finite x and NaN otherwise (0 * ±inf is NaN), and nansum counts
        # the ones in one vectorized pass that skips the NaNs, where count_nonzero is not
        # vectorized (about 2x faster at 2^18 elements). Exact: partial sums of ones stay
        # integers below 2^24.
        finite = torch.nansum(_ONES[values.dtype].add(values, alpha=0))
        return (values.numel() - finite).to(torch.int64)
    # x - x is +0.0 for finite x and NaN for NaN or ±inf, and count_nonzero counts NaN: two
    # passes where `isfinite` takes four before counting
    differences = values - values
    bits = _SAME_WIDTH_INTS.get(differences.dtype)
    if bits is not None and eager_at_least(differences, _COUNT_BITS_FROM):
        # +0.0 has all-zero bits and NaN does not, and CPU count_nonzero over integers is
        # vectorized where over floats it is not (about 2x faster at 2^18 elements)
        differences = differences.view(bits)
    return torch.count_nonzero(differences)


def count_negative(values: Tensor | None) -> Tensor | None:
    """Number of negative or NaN entries (None when there is no tensor).

    A NaN weight is as invalid as a negative one: it would silently turn into a 0 or a NaN
    somewhere downstream, so it is counted here (`not x >= 0` is true for NaN).
    """
    if values is None:
        return None
    return torch.count_nonzero(torch.logical_not(values >= 0))


def count_nonfinite_rows(scores: Tensor) -> Tensor | None:
    """Number of rows of class scores (the last dimension) whose maximum is NaN or infinite.

    A NaN anywhere in a row makes the row's maximum NaN, so one reading pass finds every row
    with a NaN, instead of a NaN test of every score; a -inf score (a masked class) is
    legitimate and not counted.
    """
    return count_nonfinite(scores.amax(dim=-1)) if scores.numel() else count_nonfinite(scores)
