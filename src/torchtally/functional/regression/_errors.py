"""Mean squared, mean absolute and symmetric mean absolute percentage error."""

from __future__ import annotations

import torch
from torch import Tensor

from torchtally._errors import check_choice
from torchtally.functional._blocks import add_pieces, blocked
from torchtally.functional._checks import check_same_shape, count_nonfinite
from torchtally.functional._workspace import (
    float64_scratch,
    leading,
    scratch,
    scratch_allowed,
)

__all__ = [
    "ZERO_PAIRS",
    "absolute_error_sum",
    "absolute_error_sum_checked",
    "absolute_error_update",
    "mean_absolute_error",
    "mean_squared_error",
    "smape",
    "smape_sum",
    "smape_update",
    "squared_error_sum",
    "squared_error_sum_checked",
    "squared_error_update",
]


def _floating(values: Tensor) -> Tensor:
    """`values` as they are when floating point (a float64 operand promotes them exactly),
    else as float64 (integer and bool tensors)."""
    return values if values.is_floating_point() else values.double()


def _float64_difference(predictions: Tensor, labels: Tensor) -> Tensor:
    """predictions - labels in float64 arithmetic, in one new float64 tensor: the
    predictions' float64 copy takes the difference in place (a subtraction that allocates its
    result would page in a second batch-sized buffer)."""
    difference = predictions.double()
    if difference is predictions:  # already float64: never write the caller's tensor
        return predictions - _floating(labels)
    # float labels promote inside the kernel: exactly the float64 subtraction
    return difference.sub_(_floating(labels))


def _with_count(total: Tensor, labels: Tensor) -> tuple[Tensor, Tensor]:
    return total, total.new_full((), labels.numel())


#: From this many elements an eager CPU error sum works in reused float64 scratch buffers, in
#: blocks of `_BLOCK` elements: the float64 difference of a whole batch is otherwise a fresh
#: allocation of 8 bytes an element, whose page faults cost several times the arithmetic.
#: (From 2^16 was no faster. Blocks of 2^16, two 512 KiB float64 buffers within this CPU's
#: 2 MiB L2, took 0.7-0.8x the time of blocks of 2^18 at 2^18 elements: 2026-11-29, one
#: intra-op thread, a loaded machine.)
_BLOCK_FROM = 1 << 17
_BLOCK = 1 << 16


def _flat(values: Tensor) -> Tensor:
    return values if values.dim() == 1 else values.view(-1)


def _block(flat: Tensor, start: int, rows: int) -> Tensor:
    """`flat[start : start + rows]`, without the slice when that is all of it."""
    return flat if start == 0 and rows >= flat.shape[0] else flat[start : start + rows]


def _error_sum(labels: Tensor, predictions: Tensor, absolute: bool) -> Tensor:
    rows = blocked(predictions, from_elements=_BLOCK_FROM, block_elements=_BLOCK)
    if (
        rows is None
        or not (predictions.is_contiguous() and labels.is_contiguous())
        or not scratch_allowed(labels, predictions)
    ):
        return _piece_sum(_float64_difference(predictions, labels), absolute)
    flat_p, flat_y = _flat(predictions), _flat(labels)
    scratch, scratch_y = float64_scratch(2, min(rows, flat_p.shape[0]))
    total: Tensor | None = None
    for start in range(0, flat_p.shape[0], rows):
        block, labels_block = _block(flat_p, start, rows), _block(flat_y, start, rows)
        size = block.shape[0]
        if labels_block.dtype != torch.float64:
            # A float64 copy of its own: a float32 operand of a float64 subtraction is
            # converted into a fresh temporary by the CPU kernel, a reused buffer is cheaper.
            labels_block = leading(scratch_y, size).copy_(labels_block)
        # the predictions' float64 copy in the reused scratch buffer minus the labels: exactly
        # the float64 subtraction
        difference = leading(scratch, size).copy_(block).sub_(labels_block)
        piece = _piece_sum(difference, absolute)
        total = piece if total is None else total.add_(piece)
    assert total is not None  # blocked() only splits a non-empty batch
    return total


#: Finite float64 stand-ins written over non-finite float32 inputs by the checked sums below.
#: Any sum of float32 values or of their float64 differences, squares and absolute values
#: stays below 2^290 in magnitude (|x| < 2^128, at most 2^31 terms), far under half a unit in
#: the last place of a multiple of these marks: a float64 sum holding k marks (in any order,
#: with or without FMA) is exactly k marks, and the count is the sum over the mark.
#: A non-finite prediction's difference is the prediction mark (a label mark is 2^180 times
#: smaller and rounds away), its square 2^960 (2^31 of them stay finite); a non-finite label's
#: difference is 2^300, whose square (2^600) and absolute value round away next to a
#: prediction mark and stay under one when there is none.
PREDICTION_MARK = 2.0**480
LABEL_MARK = -(2.0**300)


def _error_sum_checked(
    labels: Tensor, predictions: Tensor, absolute: bool
) -> tuple[Tensor, Tensor | None, Tensor | None]:
    """The error sum with the non-finite label and prediction counts of `count_nonfinite`.

    Eager on CPU, for large contiguous float32 batches, the counts come out of the sums
    themselves: each block's float64 copies have their non-finite entries replaced in place by
    finite marks (`PREDICTION_MARK`, `LABEL_MARK`), the labels' sum counts the label marks and
    the error sum the prediction marks, exactly. That is one in-place pass per input over a
    cache-warm block, instead of two count passes per input over the batch (and a fresh
    count buffer each). A batch with a non-finite value then adds a finite, meaningless error
    sum, never read: its counts make `compute` raise. Elsewhere (small batches, other dtypes,
    compiled or traced), the sum and two `count_nonfinite` calls.
    """
    rows = blocked(predictions, from_elements=_BLOCK_FROM, block_elements=_BLOCK)
    if (
        rows is None
        or labels.dtype != torch.float32
        or predictions.dtype != torch.float32
        or not (predictions.is_contiguous() and labels.is_contiguous())
        or not scratch_allowed(labels, predictions)
    ):
        plain = _error_sum(labels, predictions, absolute)
        return plain, count_nonfinite(labels), count_nonfinite(predictions)
    flat_p, flat_y = _flat(predictions), _flat(labels)
    scratch, scratch_y = float64_scratch(2, min(rows, flat_p.shape[0]))
    totals: tuple[Tensor, ...] | None = None
    for start in range(0, flat_p.shape[0], rows):
        block = _block(flat_p, start, rows)
        size = block.shape[0]
        labels64 = leading(scratch_y, size).copy_(_block(flat_y, start, rows))
        labels64.nan_to_num_(LABEL_MARK, LABEL_MARK, LABEL_MARK)
        predictions64 = leading(scratch, size).copy_(block)
        predictions64.nan_to_num_(PREDICTION_MARK, PREDICTION_MARK, PREDICTION_MARK)
        label_piece = labels64.sum()
        totals = add_pieces(
            totals, (_piece_sum(predictions64.sub_(labels64), absolute), label_piece)
        )
    assert totals is not None  # blocked() never splits an empty batch
    total, label_total = totals
    # Each sum is a whole number of marks, or far below one mark: scaled by the mark's
    # (exact, power-of-two) inverse and truncated, the count.
    prediction_mark = PREDICTION_MARK * PREDICTION_MARK if not absolute else PREDICTION_MARK
    bad_labels = (label_total * (1.0 / LABEL_MARK)).to(torch.int64)
    bad_predictions = (total * (1.0 / prediction_mark)).to(torch.int64)
    return total, bad_labels, bad_predictions


def squared_error_sum_checked(
    labels: Tensor, predictions: Tensor
) -> tuple[Tensor, Tensor | None, Tensor | None]:
    """`squared_error_sum` and the `count_nonfinite` of labels and predictions, in fewer
    passes for large eager CPU float32 batches (the sum is meaningless when a count is not
    zero)."""
    check_same_shape("labels", labels, "predictions", predictions)
    return _error_sum_checked(labels, predictions, absolute=False)


def absolute_error_sum_checked(
    labels: Tensor, predictions: Tensor
) -> tuple[Tensor, Tensor | None, Tensor | None]:
    """`absolute_error_sum` and the `count_nonfinite` of labels and predictions (see
    `squared_error_sum_checked`)."""
    check_same_shape("labels", labels, "predictions", predictions)
    return _error_sum_checked(labels, predictions, absolute=True)


def _piece_sum(difference: Tensor, absolute: bool) -> Tensor:
    """Σ|d| or Σd² of a float64 difference that this call owns (it is overwritten)."""
    if absolute:
        return difference.abs_().sum()
    flat = difference if difference.dim() == 1 else difference.reshape(-1)
    # One dot product squares and sums in a single pass with no squared buffer (a float64
    # dot of float64 values: the same float64 arithmetic, only summed in another order).
    return torch.dot(flat, flat)


def per_output_difference(labels: Tensor, predictions: Tensor) -> Tensor:
    """predictions - labels in float64 as `(N, k)`: one column per output of `(N,)` or
    `(N, k)` inputs (any further dimensions are flattened into the outputs)."""
    rows = labels.shape[0] if labels.dim() else 1
    return (predictions.double() - labels.double()).reshape(rows, -1)


def squared_error_sum(
    labels: Tensor, predictions: Tensor, per_output: bool = False, *, input_dtype: bool = False
) -> Tensor:
    """Sum of squared errors of one batch (0-d float64); the count is `labels.numel()`.
    `per_output=True`: one sum per output column, `(k,)` (see `per_output_difference`), whose
    count is the number of rows.

    With `input_dtype`, `sum((p - y)²)` as PyTorch sums it in the inputs' promoted dtype
    (float32 inputs: float32 rounding), for conventions that round so (NeuroBench's R²).
    """
    check_same_shape("labels", labels, "predictions", predictions)
    if input_dtype:
        if per_output:
            raise ValueError(
                "Arguments `per_output` and `input_dtype` cannot both be True (per-output sums "
                "are float64). Received: per_output=True, input_dtype=True"
            )
        return torch.sum((predictions - labels) ** 2)
    if per_output:
        return per_output_difference(labels, predictions).square().sum(0)
    return _error_sum(labels, predictions, absolute=False)


def absolute_error_sum(labels: Tensor, predictions: Tensor, per_output: bool = False) -> Tensor:
    """Sum of absolute errors of one batch (0-d float64); the count is `labels.numel()`.
    `per_output=True`: one sum per output column, `(k,)`."""
    check_same_shape("labels", labels, "predictions", predictions)
    if per_output:
        return per_output_difference(labels, predictions).abs().sum(0)
    return _error_sum(labels, predictions, absolute=True)


#: What an element with p = y = 0 adds to SMAPE: "zero" (a perfect prediction) or "nan" (the
#: IEEE 0/0, which makes the mean NaN: NeuroBench's, which then scores the batch 200).
ZERO_PAIRS = ("zero", "nan")


def _smape_ratio(
    labels: Tensor, predictions: Tensor, zero_pairs: str, epsilon: float | None = None
) -> Tensor:
    """|p - y| / (|p| + |y|) elementwise, in the dtype of the inputs as given; with `epsilon`
    the denominator is at least `epsilon` (and `zero_pairs` has nothing left to decide)."""
    check_choice("zero_pairs", zero_pairs, ZERO_PAIRS)
    denominator = torch.abs(predictions) + torch.abs(labels)
    if epsilon is not None:
        denominator = denominator.clamp(min=epsilon)
    elif zero_pairs == "zero":
        denominator = torch.where(denominator == 0, 1.0, denominator)
    return torch.abs(predictions - labels) / denominator


def smape_sum(
    labels: Tensor,
    predictions: Tensor,
    epsilon: float | None = None,
    *,
    zero_pairs: str = "zero",
) -> Tensor:
    """Sum of |p - y| / (|p| + |y|) of one batch (0-d float64; an element with p = y = 0 adds
    0, or NaN with `zero_pairs="nan"`); the count is `labels.numel()`.

    `epsilon`: the denominator is at least `epsilon` instead (TorchMetrics' convention: a
    pair of values both within it of 0 is scored against `epsilon`, not skipped).
    """
    check_same_shape("labels", labels, "predictions", predictions)
    rows = blocked(predictions, from_elements=_SMAPE_BLOCK_FROM, block_elements=_BLOCK)
    if (
        rows is None
        or not (predictions.is_contiguous() and labels.is_contiguous())
        or not (predictions.is_floating_point() and labels.is_floating_point())
        or not scratch_allowed(labels, predictions)
    ):
        ratio = _smape_ratio(labels.double(), predictions.double(), zero_pairs, epsilon)
        return ratio.sum(dtype=torch.float64)
    check_choice("zero_pairs", zero_pairs, ZERO_PAIRS)
    flat_p, flat_y = _flat(predictions), _flat(labels)
    p64, y64, error = float64_scratch(3, min(rows, flat_p.shape[0]))
    # Zero pairs (p = y = 0) as `_smape_ratio` scores them: a denominator of 0 raised to a bound
    # below every positive one, a normal float64 (a subnormal bound reads as 0 with
    # `torch.set_flush_denormal(True)`, and 0 / 0 is NaN). Float32 and narrower inputs add up to
    # at least 2^-149 when not 0; float64 ones can be subnormal: masked instead (slower).
    wide = torch.float64 in (labels.dtype, predictions.dtype)
    floor = epsilon if epsilon is not None else (None if zero_pairs == "nan" or wide else 2.0**-150)
    mask_zeros = epsilon is None and zero_pairs == "zero" and wide
    zeros = scratch(torch.bool, 1, min(rows, flat_p.shape[0]))[0] if mask_zeros else None
    total: Tensor | None = None
    for start in range(0, flat_p.shape[0], rows):
        block = _block(flat_p, start, rows)
        size = block.shape[0]
        p = leading(p64, size).copy_(block)
        y = leading(y64, size).copy_(_block(flat_y, start, rows))
        ratio = torch.sub(p, y, out=leading(error, size)).abs_()
        denominator = p.abs_().add_(y.abs_())
        if floor is not None:
            denominator.clamp_(min=floor)
        elif zeros is not None:
            denominator.masked_fill_(torch.eq(denominator, 0, out=leading(zeros, size)), 1.0)
        piece = ratio.div_(denominator).sum()
        total = piece if total is None else total.add_(piece)
    assert total is not None  # blocked() only splits a non-empty batch
    return total


#: From this many elements an eager CPU SMAPE sum works in blocks of `_BLOCK` through reused
#: float64 buffers: its eight elementwise float64 temporaries, each a fresh allocation, cost
#: more in page faults than in arithmetic from here.
_SMAPE_BLOCK_FROM = 1 << 13


def squared_error_update(labels: Tensor, predictions: Tensor) -> tuple[Tensor, Tensor]:
    """Sum of squared errors and element count of one batch."""
    return _with_count(squared_error_sum(labels, predictions), labels)


def absolute_error_update(labels: Tensor, predictions: Tensor) -> tuple[Tensor, Tensor]:
    """Sum of absolute errors and element count of one batch."""
    return _with_count(absolute_error_sum(labels, predictions), labels)


def smape_update(labels: Tensor, predictions: Tensor) -> tuple[Tensor, Tensor]:
    """Sum of |p - y| / (|p| + |y|) and element count; an element with p = y = 0 adds 0."""
    return _with_count(smape_sum(labels, predictions), labels)


def mean_squared_error(labels: Tensor, predictions: Tensor, *, input_dtype: bool = False) -> Tensor:
    """Mean of (predictions - labels)² over all elements (float64).

    With `input_dtype`, `mean((p - y)²)` as PyTorch takes it in the inputs' promoted dtype
    (float32 inputs: float32 rounding, NeuroBench's convention) instead of from float64 sums.

    Example:
        >>> mean_squared_error(torch.tensor([0.0, 2.0]), torch.tensor([1.0, 2.0]))
        tensor(0.5000, dtype=torch.float64)
    """
    if input_dtype:
        check_same_shape("labels", labels, "predictions", predictions)
        return torch.mean((predictions - labels) ** 2)
    total, count = squared_error_update(labels, predictions)
    return total / count


def mean_absolute_error(labels: Tensor, predictions: Tensor) -> Tensor:
    """Mean of |predictions - labels| over all elements (float64).

    Example:
        >>> mean_absolute_error(torch.tensor([0.0, 2.0]), torch.tensor([1.0, 2.0]))
        tensor(0.5000, dtype=torch.float64)
    """
    total, count = absolute_error_update(labels, predictions)
    return total / count


def smape(
    labels: Tensor, predictions: Tensor, *, input_dtype: bool = False, zero_pairs: str = "zero"
) -> Tensor:
    """Symmetric mean absolute percentage error in percent, in [0, 200].

    200 · mean(|p - y| / (|p| + |y|)), where an element with p = y = 0 counts as a perfect 0
    (with `zero_pairs="nan"`: as 0/0, NaN, which makes the result NaN).

    With `input_dtype`, `200 * mean(ratio)` as PyTorch takes it in the inputs' promoted dtype
    (float32 inputs: float32 rounding, NeuroBench's convention) instead of from float64 sums.

    Example:
        >>> smape(torch.tensor([1.0, 0.0]), torch.tensor([3.0, 0.0]))
        tensor(50., dtype=torch.float64)
    """
    if input_dtype:
        check_same_shape("labels", labels, "predictions", predictions)
        return 200 * torch.mean(_smape_ratio(labels, predictions, zero_pairs))
    if zero_pairs != "zero":
        total = smape_sum(labels, predictions, zero_pairs=zero_pairs)
        return 200.0 * total / labels.numel()
    total, count = smape_update(labels, predictions)
    return 200.0 * total / count
