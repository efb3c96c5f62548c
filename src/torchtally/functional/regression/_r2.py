"""Coefficient of determination (R²), from sums that add across batches and ranks."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from torchtally._errors import check_choice, tracing
from torchtally.functional._blocks import blocked
from torchtally.functional._checks import check_same_shape, count_nonfinite
from torchtally.functional.regression._errors import LABEL_MARK, PREDICTION_MARK
from torchtally.functional.regression._fused import count_table, difference_table, eager_cpu
from torchtally.functional.regression._workspace import (
    float64_scratch,
    gram_rows,
    leading,
    scratch_allowed,
)

__all__ = [
    "MULTIOUTPUT",
    "add_r2_gram",
    "gram_sums",
    "r2_compute",
    "r2_score",
    "r2_sums",
    "r2_sums_checked",
    "r2_update",
]

MULTIOUTPUT = ("uniform_average", "raw_values", "variance_weighted")


def r2_update(labels: Tensor, predictions: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Per-output Σy, Σy², Σ(y - p)² and the sample count of one batch.

    `labels` is `(N,)` for one output or `(N, num_outputs)`; sums are float64 `(num_outputs,)`.
    """
    sums = r2_sums(labels, predictions)
    sum_y, sum_y2, sse = (total.reshape(-1) for total in sums)
    return sum_y, sum_y2, sse, sum_y.new_full((), labels.shape[0] if labels.dim() else 1)


def gram_sums(gram: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Σy, Σy², Σ(p - y)² per output and the sample count, read from a `(k, 3, 3)` Gram
    matrix of the rows `[y, 1, p - y]` (views)."""
    return gram[:, 0, 1], gram[:, 0, 0], gram[:, 2, 2], gram[0, 1, 1]


def r2_sums(labels: Tensor, predictions: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """`r2_update` without the count (a metric adds `labels.shape[0]` as a number); 0-d sums
    for `(N,)` labels (they add into a `(1,)` state as they are)."""
    check_same_shape("labels", labels, "predictions", predictions)
    gram = _zeros_like_gram(labels)
    add_r2_gram(gram, labels, predictions)
    return _shaped_sums(gram, labels)


def r2_sums_checked(
    labels: Tensor, predictions: Tensor
) -> tuple[Tensor, Tensor, Tensor, Tensor | None, Tensor | None]:
    """`r2_sums` and the `count_nonfinite` of labels and predictions.

    The sums are meaningless when a count is not zero (`compute` then raises)."""
    check_same_shape("labels", labels, "predictions", predictions)
    gram = _zeros_like_gram(labels)
    bad_labels, bad_predictions = add_r2_gram(gram, labels, predictions, checked=True)
    return (*_shaped_sums(gram, labels), bad_labels, bad_predictions)


def _zeros_like_gram(labels: Tensor) -> Tensor:
    outputs = math.prod(labels.shape[1:])
    return torch.zeros(outputs, 3, 3, dtype=torch.float64, device=labels.device)


def _shaped_sums(gram: Tensor, labels: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    sum_y, sum_y2, sse, _ = gram_sums(gram)
    if labels.dim() <= 1:
        return sum_y[0], sum_y2[0], sse[0]
    return sum_y, sum_y2, sse


def add_r2_gram(
    gram: Tensor, labels: Tensor, predictions: Tensor, checked: bool = False
) -> tuple[Tensor | None, Tensor | None]:
    """Add the Gram matrix of the rows `[y, 1, p - y]` of each output (`(N,)` or `(N, k)`
    inputs, `(k, 3, 3)` float64 `gram`: n, Σy, Σy², Σ(p - y), Σy(p - y), Σ(p - y)²), in
    float64 arithmetic; with `checked`, return the non-finite label and prediction counts
    (0-d int64; None for an input that cannot hold them).

    Off the eager CPU path: the few-kernel form of `_fused`. Eager on CPU: the rows are built
    in float64 buffers, in blocks of rows for a large batch (reused cache-sized buffers
    instead of fresh batch-sized allocations), one matrix product per block. For large
    float32 batches with `checked`, the counts come out of the Gram matrix itself: non-finite
    entries of the float64 copies are overwritten in place by finite marks (`_errors`'
    `LABEL_MARK`, `PREDICTION_MARK`), Σy counting the label marks and Σ(p - y)² the
    prediction marks; the sums of such a batch are meaningless (its counts make `compute`
    raise).
    """
    check_same_shape("labels", labels, "predictions", predictions)
    if not eager_cpu(labels):
        table = difference_table(labels, predictions, columns=True)
        counts = count_table(table) if checked else None
        # [-y, -1, -(p - y)] per output: the signs cancel in every product
        _add_gram(gram, table[0:5:2].transpose(0, 1))
        return (counts[0], counts[1]) if counts is not None else (None, None)
    rows = blocked(labels, gram.shape[0], from_elements=_BLOCK_FROM, block_elements=_BLOCK)
    # The thread's reused buffers, unless autograd records the inputs (see scratch_allowed)
    # or a trace would keep them as constants.
    reuse = scratch_allowed(labels, predictions) and not (
        torch.jit.is_tracing() or tracing(labels, predictions)
    )
    marked = (
        checked
        and rows is not None
        and reuse
        and gram.shape[0] == 1
        and labels.dtype == torch.float32
        and predictions.dtype == torch.float32
    )
    if gram.shape[0] == 1:
        y2, y, yd, d, d2 = _one_output_sums(labels, predictions, rows, reuse, marked).unbind()
        count = y.new_full((), float(labels.numel()))
        gram.view(9).add_(torch.stack([y2, y, yd, y, count, d, yd, d, d2]))
        if marked:
            # A whole number of marks, or far below one mark (see _errors.PREDICTION_MARK)
            bad_labels = (y * (1.0 / LABEL_MARK)).to(torch.int64)
            bad_predictions = (d2 * (1.0 / (PREDICTION_MARK * PREDICTION_MARK))).to(torch.int64)
            return bad_labels, bad_predictions
    else:
        _add_blocks(gram, labels, predictions, rows, reuse)
    if not checked:
        return None, None
    return count_nonfinite(labels), count_nonfinite(predictions)


#: From this many elements an eager CPU update works in blocks of about `_BLOCK` elements.
_BLOCK_FROM = 1 << 16
_BLOCK = 1 << 16


def _one_output_sums(
    labels: Tensor, predictions: Tensor, rows: int | None, reuse: bool, marked: bool
) -> Tensor:
    """Eager CPU, one output: `[Σy², Σy, Σy(p - y), Σ(p - y), Σ(p - y)²]` (float64), `rows`
    rows at a time (None: the whole batch at once), in the thread's reused float64 buffers
    or fresh ones; `marked`: non-finite inputs replaced by their marks first."""
    y, p = labels.reshape(-1), predictions.reshape(-1)
    total = y.shape[0]
    step = max(1, total if rows is None else min(rows, total))
    sums: Tensor | None = None
    for start in range(0, total or 1, step):  # an empty batch: one empty block
        size = min(step, total - start)
        y_block = y if size == total else y[start : start + size]
        p_block = p if size == total else p[start : start + size]
        if reuse:
            first, second = float64_scratch(2, size)
            label_row, residual = leading(first, size), leading(second, size)
            label_row.copy_(y_block)
            residual.copy_(p_block)
        else:
            label_row, residual = y_block.to(torch.float64), p_block.to(torch.float64)
            if residual is p_block:  # already float64: never write the caller's tensor
                residual = residual.clone()
        if marked:
            label_row.nan_to_num_(LABEL_MARK, LABEL_MARK, LABEL_MARK)
            residual.nan_to_num_(PREDICTION_MARK, PREDICTION_MARK, PREDICTION_MARK)
        residual.sub_(label_row)
        # Separate reductions: cheaper on a CPU than one product with a row of ones
        piece = torch.stack(
            [
                torch.dot(label_row, label_row),
                label_row.sum(),
                torch.dot(label_row, residual),
                residual.sum(),
                torch.dot(residual, residual),
            ]
        )
        sums = piece if sums is None else sums.add_(piece)
    assert sums is not None
    return sums


def _add_blocks(
    gram: Tensor, labels: Tensor, predictions: Tensor, rows: int | None, reuse: bool
) -> None:
    """Eager CPU, several outputs: add the Gram matrices of `[y, 1, p - y]` per output, `rows`
    rows at a time (None: the whole batch at once), through the thread's reused row buffers
    or fresh ones."""
    total = labels.shape[0]
    step = max(1, total if rows is None else min(rows, total))
    y, p = labels.t(), predictions.t()
    outputs = gram.shape[0]
    for start in range(0, total, step):
        size = min(step, total - start)
        block = gram_rows(outputs, size) if reuse else _fresh_rows(outputs, size)
        label_row, residual = block[:, 0], block[:, 2]
        label_row.copy_(y if size == total else y[:, start : start + size])
        residual.copy_(p if size == total else p[:, start : start + size])
        residual.sub_(label_row)
        _add_gram(gram, block)


def _add_gram(gram: Tensor, rows: Tensor) -> None:
    """gram += rows @ rows.T per output (`(k, 3, N)` rows, a strided view is fine)."""
    if rows.shape[0] == 1:
        gram[0].addmm_(rows[0], rows[0].t())
    else:
        gram.baddbmm_(rows, rows.transpose(1, 2))


def _fresh_rows(outputs: int, size: int) -> Tensor:
    block = torch.empty(outputs, 3, size, dtype=torch.float64)
    block[:, 1].fill_(1.0)
    return block


def r2_compute(
    sum_y: Tensor,
    sum_y2: Tensor,
    sum_squared_error: Tensor,
    count: Tensor,
    multioutput: str = "uniform_average",
) -> Tensor:
    """R² from accumulated sums, with scikit-learn's conventions.

    An output whose labels are constant scores 1.0 if predicted exactly, else 0.0.
    Float64 sums keep about 1e-9 relative accuracy while |mean(y)| / std(y) stays below ~1e3.
    """
    check_choice("multioutput", multioutput, MULTIOUTPUT)
    total = sum_y2 - sum_y.square() / count
    exact = sum_squared_error == 0
    constant = total <= 0
    safe_total = torch.where(constant, 1.0, total)
    per_output = torch.where(
        constant, torch.where(exact, 1.0, 0.0), 1.0 - sum_squared_error / safe_total
    )
    if multioutput == "raw_values":
        return per_output
    if multioutput == "uniform_average":
        return per_output.mean()
    weights = total.clamp(min=0)
    weight_sum = weights.sum()
    weighted = (per_output * weights).sum() / torch.where(weight_sum == 0, 1.0, weight_sum)
    # All outputs constant: scikit-learn falls back to the plain average.
    return torch.where(weight_sum == 0, per_output.mean(), weighted)


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
