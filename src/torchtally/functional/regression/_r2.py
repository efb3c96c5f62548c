"""Coefficient of determination (R²), from sums that add across batches and ranks."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from torchtally._errors import check_choice
from torchtally.functional._blocks import blocked
from torchtally.functional._checks import check_same_shape, count_nonfinite
from torchtally.functional._workspace import (
    float64_scratch,
    leading,
    scratch_allowed,
)
from torchtally.functional.regression._errors import LABEL_MARK, PREDICTION_MARK
from torchtally.functional.regression._fused import count_table, difference_table

__all__ = [
    "MULTIOUTPUT",
    "NORMALIZATIONS",
    "R2_DIVISIONS",
    "add_r2_sums_fused",
    "explained_variance_compute",
    "explained_variance_sums",
    "nrmse_compute",
    "r2_compute",
    "r2_from_totals",
    "r2_score",
    "r2_sums",
    "r2_sums_checked",
    "r2_update",
    "relative_squared_error_compute",
]

MULTIOUTPUT = ("uniform_average", "raw_values", "variance_weighted")


def r2_update(labels: Tensor, predictions: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Per-output Σy, Σy², Σ(y - p)² and the sample count of one batch.

    `labels` is `(N,)` for one output or `(N, num_outputs)`; sums are float64 `(num_outputs,)`.
    """
    sums = r2_sums(labels, predictions)
    sum_y, sum_y2, sse = (total.reshape(-1) for total in sums)
    return sum_y, sum_y2, sse, sum_y.new_full((), labels.shape[0] if labels.dim() else 1)


def r2_sums(labels: Tensor, predictions: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """`r2_update` without the count (a metric adds `labels.shape[0]` as a number); 0-d sums
    for `(N,)` labels (they add into a `(1,)` state as they are)."""
    check_same_shape("labels", labels, "predictions", predictions)
    outputs = math.prod(labels.shape[1:])
    rows = blocked(labels, outputs, from_elements=_BLOCK_FROM, block_elements=_BLOCK)
    if rows is None or not scratch_allowed(labels, predictions):
        return _r2_piece(labels, predictions)
    return _r2_blocks(labels, predictions, rows, outputs, marked=False)


def r2_sums_checked(
    labels: Tensor, predictions: Tensor
) -> tuple[Tensor, Tensor, Tensor, Tensor | None, Tensor | None]:
    """`r2_sums` and the `count_nonfinite` of labels and predictions.

    Eager on CPU, for large float32 batches, the counts come out of the sums (Σy counts the
    label marks, Σ(p - y)² the prediction marks; see `squared_error_sum_checked`): one
    in-place pass per input over a cache-warm block instead of two count passes per input.
    The sums are meaningless when a count is not zero (`compute` then raises).
    """
    check_same_shape("labels", labels, "predictions", predictions)
    outputs = math.prod(labels.shape[1:])
    rows = blocked(labels, outputs, from_elements=_BLOCK_FROM, block_elements=_BLOCK)
    if (
        rows is None
        or labels.dtype != torch.float32
        or predictions.dtype != torch.float32
        or not scratch_allowed(labels, predictions)
    ):
        sum_y, sum_y2, sse = r2_sums(labels, predictions)
        return sum_y, sum_y2, sse, count_nonfinite(labels), count_nonfinite(predictions)
    sum_y, sum_y2, sse = _r2_blocks(labels, predictions, rows, outputs, marked=True)
    # Per output a whole number of marks, or far below one mark (see _errors.PREDICTION_MARK)
    bad_labels = (sum_y * (1.0 / LABEL_MARK)).to(torch.int64)
    bad_predictions = (sse * (1.0 / (PREDICTION_MARK * PREDICTION_MARK))).to(torch.int64)
    if outputs > 1:
        bad_labels, bad_predictions = bad_labels.sum(), bad_predictions.sum()
    return sum_y, sum_y2, sse, bad_labels, bad_predictions


def add_r2_sums_fused(
    sums: Tensor, labels: Tensor, predictions: Tensor, checked: bool
) -> Tensor | None:
    """Add one batch's per-output `[Σy², n, Σ(p - y)², Σy]` to `sums` (float64 `(4, k)`) in few
    kernels (`_fused`'s table), for an update off the eager CPU path; with `checked`, return
    the non-finite label and prediction counts, `(2,)` int64.

    One output: three dot products of the rows `[-y, -1, -(p - y)]` with themselves, one
    batched product (the signs cancel), and Σ(-y)(-1) = Σy, one matrix-vector product."""
    check_same_shape("labels", labels, "predictions", predictions)
    table = difference_table(labels, predictions, columns=True)
    counts = count_table(table) if checked else None
    rows = table[0:5:2]  # [-y, -1, -(p - y)], (3, k, N)
    if sums.shape[1] == 1:
        flat = rows[:, 0]
        sums[0:3].view(3, 1, 1).baddbmm_(flat.unsqueeze(1), flat.unsqueeze(2))
        sums[3].addmv_(flat[0:1], flat[1])
    else:
        sums[0:3].add_(rows.square().sum(-1))
        sums[3].sub_(rows[0].sum(-1))
    return counts


def _r2_blocks(
    labels: Tensor, predictions: Tensor, rows: int, outputs: int, marked: bool
) -> tuple[Tensor, Tensor, Tensor]:
    # Eager CPU, a large batch: in blocks of rows, so that the float64 copies are
    # cache-sized scratch buffers reused by every block and every call instead of fresh
    # batch-sized allocations.
    scratch = float64_scratch(2, min(rows, labels.shape[0]) * outputs)
    if rows >= labels.shape[0]:  # one block: no slices
        return _r2_piece(labels, predictions, scratch, marked)
    sums = _r2_piece(labels[:rows], predictions[:rows], scratch, marked)
    for start in range(rows, labels.shape[0], rows):
        stop = start + rows
        piece = _r2_piece(labels[start:stop], predictions[start:stop], scratch, marked)
        for total, part in zip(sums, piece, strict=True):
            total.add_(part)
    return sums


#: From this many elements an eager CPU update works in blocks of about `_BLOCK` elements
#: (2^16: the 65536 rows of four held-back 16384-row batches, 2-7 % faster blocked). Blocks of
#: 2^16 (two 512 KiB float64 buffers, within this CPU's 2 MiB L2) took 0.6-0.8x the time of
#: blocks of 2^18 at 2^18 elements (2026-11-29, one intra-op thread, a loaded machine).
_BLOCK_FROM = 1 << 16
_BLOCK = 1 << 16


def _shaped(buffer: Tensor, size: int, shape: torch.Size) -> Tensor:
    head = leading(buffer, size)
    return head if len(shape) == 1 else head.view(shape)


def _r2_piece(
    labels: Tensor, predictions: Tensor, scratch: list[Tensor] | None = None, marked: bool = False
) -> tuple[Tensor, Tensor, Tensor]:
    """Σy, Σy², Σ(p - y)² of one piece in float64 arithmetic, in fresh float64 copies or in
    `scratch` (two float64 buffers of at least `labels.numel()` elements, overwritten);
    `marked` (float32 inputs, with scratch): non-finite inputs replaced by their marks."""
    if scratch is None:
        y = labels.double()
        # (p - y)² = (y - p)², taken in place in the predictions' float64 copy (one
        # batch-sized buffer, not two; float64 on both sides: the vectorized same-dtype
        # kernel); a float64 input is never written
        residual = predictions.double()
        residual = residual - y if residual is predictions else residual.sub_(y)
    else:
        size, shape = labels.numel(), labels.shape
        y = labels if labels.dtype == torch.float64 else _shaped(scratch[0], size, shape)
        if y is not labels:
            y.copy_(labels)
        residual = _shaped(scratch[1], size, shape).copy_(predictions)
        if marked:
            y.nan_to_num_(LABEL_MARK, LABEL_MARK, LABEL_MARK)
            residual.nan_to_num_(PREDICTION_MARK, PREDICTION_MARK, PREDICTION_MARK)
        residual.sub_(y)
    if y.dim() == 1:
        # One dot product squares and sums in a single pass with no squared buffer.
        return y.sum(), torch.dot(y, y), torch.dot(residual, residual)
    y = y.reshape(y.shape[0], math.prod(y.shape[1:]))
    residual = residual.reshape(y.shape)
    sum_y = y.sum(0)
    # Squared in place when `y` is this call's own float64 buffer (one batch-sized buffer less)
    squares = y.square() if labels.dtype == torch.float64 else y.square_()
    return sum_y, squares.sum(0), residual.square_().sum(0)


def r2_compute(
    sum_y: Tensor,
    sum_y2: Tensor,
    sum_squared_error: Tensor,
    count: Tensor,
    multioutput: str = "uniform_average",
    *,
    adjusted: int = 0,
    tolerance: float = 0.0,
    weighted_fallback: bool = True,
) -> Tensor:
    """R² from accumulated sums, with scikit-learn's conventions.

    An output whose labels are constant scores 1.0 if predicted exactly, else 0.0.
    Float64 sums keep about 1e-9 relative accuracy while |mean(y)| / std(y) stays below ~1e3.

    Args:
        adjusted: The number of regressors k of the adjusted R², 1 - (1 - R²)(n - 1) /
            (n - k - 1); the plain R² where n - 1 <= k (TorchMetrics').
        tolerance: Sums of squares at most this large count as zero (an exact prediction, a
            constant output). TorchMetrics' R2Score uses 1e-4.
        weighted_fallback: For "variance_weighted" with every output constant, the plain
            average (scikit-learn's); False: NaN, the 0/0 of the weights (TorchMetrics').
    """
    check_choice("multioutput", multioutput, MULTIOUTPUT)
    total = sum_y2 - sum_y.square() / count
    value = r2_from_totals(
        sum_squared_error,
        total,
        multioutput,
        tolerance=tolerance,
        weighted_fallback=weighted_fallback,
    )
    if adjusted:
        corrected = 1 - (1 - value) * (count - 1) / (count - adjusted - 1)
        value = torch.where(count - 1 > adjusted, corrected, value)
    return value


#: How `r2_from_totals` takes SS_res / SS_tot: "safe" (scikit-learn's rule for constant
#: labels) or "reciprocal" (SS_res · (1 / SS_tot), no rule: NeuroBench's R²).
R2_DIVISIONS = ("safe", "reciprocal")


def r2_from_totals(
    sum_squared_error: Tensor,
    total: Tensor,
    multioutput: str = "uniform_average",
    *,
    division: str = "safe",
    tolerance: float = 0.0,
    weighted_fallback: bool = True,
) -> Tensor:
    """R² per output, `1 - SS_res / SS_tot`, from the residual and total sums of squares,
    averaged over outputs as `multioutput` says.

    Args:
        sum_squared_error: SS_res per output.
        total: SS_tot per output (n · the labels' population variance), in the dtype the
            ratio is taken in.
        multioutput: "uniform_average", "raw_values" or "variance_weighted".
        division: "safe": an output predicted exactly scores 1.0, and one whose labels are
            constant (SS_tot <= `tolerance`) otherwise 0.0 (scikit-learn's rule).
            "reciprocal": `1 - SS_res * (1 / SS_tot)` for every output, as PyTorch evaluates
            `float / tensor` (NeuroBench 2.3.0's R², whose constant labels give -inf or NaN).
        tolerance: Sums of squares at most this large count as zero (an exact prediction, a
            constant output). TorchMetrics' R2Score uses 1e-4.
        weighted_fallback: For "variance_weighted" with every output constant, the plain
            average (scikit-learn's); False: NaN, the 0/0 of the weights (TorchMetrics').
    """
    check_choice("multioutput", multioutput, MULTIOUTPUT)
    check_choice("division", division, R2_DIVISIONS)
    if division == "reciprocal":
        per_output = 1 - sum_squared_error * total.reciprocal()
    else:
        exact = sum_squared_error <= tolerance if tolerance else sum_squared_error == 0
        constant = total <= tolerance
        safe_total = torch.where(constant, 1.0, total)
        per_output = torch.where(
            exact, 1.0, torch.where(constant, 0.0, 1.0 - sum_squared_error / safe_total)
        )
    if multioutput == "raw_values":
        return per_output
    if multioutput == "uniform_average":
        return per_output.mean()
    if not weighted_fallback:
        return (total / total.sum() * per_output).sum()
    weights = total.clamp(min=0)
    weight_sum = weights.sum()
    weighted = (per_output * weights).sum() / torch.where(weight_sum == 0, 1.0, weight_sum)
    # All outputs constant: scikit-learn falls back to the plain average.
    return torch.where(weight_sum == 0, per_output.mean(), weighted)


def relative_squared_error_compute(
    sum_y: Tensor,
    sum_y2: Tensor,
    sum_squared_error: Tensor,
    count: Tensor,
    squared: bool = True,
    epsilon: float = float(torch.finfo(torch.float32).eps),
) -> Tensor:
    """Σ(p - y)² / Σ(y - mean y)² per output (the total floored at `epsilon`; `squared=False`:
    its root), averaged over outputs, from `r2_update`'s sums."""
    total = sum_y2 - sum_y.square() / count
    rse = sum_squared_error / total.clamp(min=epsilon)
    return (rse if squared else rse.sqrt()).mean()


def explained_variance_sums(
    labels: Tensor, predictions: Tensor
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Per output Σ(y - p), Σ(y - p)², Σy and Σy² of one batch (float64 `(k,)`, one column per
    output of `(N,)` or `(N, k)` inputs); the count is the number of rows."""
    check_same_shape("labels", labels, "predictions", predictions)
    rows = labels.shape[0] if labels.dim() else 1
    y = labels.double().reshape(rows, -1)
    difference = y - predictions.double().reshape(rows, -1)
    return difference.sum(0), difference.square().sum(0), y.sum(0), y.square().sum(0)


def explained_variance_compute(
    sum_error: Tensor,
    sum_squared_error: Tensor,
    sum_y: Tensor,
    sum_y2: Tensor,
    count: Tensor,
    multioutput: str = "uniform_average",
) -> Tensor:
    """1 - Var(y - p) / Var(y) per output (population variances), with scikit-learn's
    conventions: 1.0 where both variances are 0, 0.0 where only Var(y) is; averaged as
    `multioutput` says ("variance_weighted": by Var(y))."""
    check_choice("multioutput", multioutput, MULTIOUTPUT)
    mean_error = sum_error / count
    numerator = sum_squared_error / count - mean_error * mean_error
    mean_y = sum_y / count
    denominator = sum_y2 / count - mean_y * mean_y
    has_num, has_den = numerator != 0, denominator != 0
    scores = torch.where(
        has_num & has_den, 1 - numerator / torch.where(has_den, denominator, 1.0), 1.0
    )
    scores = torch.where(has_num & ~has_den, 0.0, scores)
    if multioutput == "raw_values":
        return scores
    if multioutput == "uniform_average":
        return scores.mean()
    return (denominator / denominator.sum() * scores).sum()


NORMALIZATIONS = ("mean", "range", "std", "l2")


def nrmse_compute(
    sum_squared_error: Tensor,
    sum_y: Tensor,
    sum_y2: Tensor,
    count: Tensor,
    minimum: Tensor,
    maximum: Tensor,
    normalization: str = "mean",
) -> Tensor:
    """The RMSE per output over the labels' mean, range (max - min), population standard
    deviation or L2 norm (`normalization`)."""
    check_choice("normalization", normalization, NORMALIZATIONS)
    mean = sum_y / count
    if normalization == "mean":
        denominator = mean
    elif normalization == "range":
        denominator = maximum - minimum
    elif normalization == "std":
        denominator = (sum_y2 / count - mean * mean).clamp(min=0).sqrt()
    else:
        denominator = sum_y2.sqrt()
    return (sum_squared_error / count).sqrt() / denominator


def r2_score(labels: Tensor, predictions: Tensor, multioutput: str = "uniform_average") -> Tensor:
    """R² of `predictions` against `labels` (scikit-learn's `r2_score`).

    Args:
        labels: `(N,)` or `(N, num_outputs)` targets.
        predictions: Same shape as `labels`.
        multioutput: "uniform_average", "raw_values" or "variance_weighted".

    Returns:
        float64 tensor: 0-d, or `(num_outputs,)` for "raw_values".

    Example:
        >>> r2_score(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.0, 4.0]))
        tensor(0.5000, dtype=torch.float64)
    """
    return r2_compute(*r2_update(labels, predictions), multioutput=multioutput)
