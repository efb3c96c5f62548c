"""Binned AUROC: constant-memory histograms of the scores, with an exact error bound.

Scores in a known range `[low, high]` fall into `num_bins` equal-width bins; each class keeps
a histogram of its negatives' and its positives' bins. The AUROC over bins counts a
(positive, negative) pair in different bins exactly and a pair in the same bin as a tie (1/2),
so it differs from the exact AUROC by at most

    bound = 1/2 * sum_b pos_b * neg_b / (P * N)

(each same-bin pair contributes 0, 1/2 or 1 exactly, and 1/2 here). The bin map is monotone
in the score, rounding included, so the bound holds exactly; it is computable from the state.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from torchtally._errors import check_choice, check_int, tracing
from torchtally.functional._blocks import blocked, eager_at_least
from torchtally.functional._checks import (
    ErrorCounts,
    check_tensor,
    count_nonfinite,
    count_nonfinite_rows,
)
from torchtally.functional.ranking._auroc import AVERAGES, average_classes
from torchtally.functional.ranking._inputs import (
    check_score_range,
    count_invalid_labels,
    flatten_scores,
)

__all__ = [
    "add_binned_counts",
    "binned_auroc",
    "binned_auroc_compute",
    "binned_auroc_error_bound",
    "binned_auroc_update",
    "count_out_of_range",
]


def binned_auroc_update(
    labels: Tensor,
    predictions: Tensor,
    num_bins: int,
    score_range: Sequence[float] = (0.0, 1.0),
    num_classes: int | None = None,
    *,
    out: Tensor | None = None,
) -> Tensor:
    """One batch's histograms, with one `index_add_`.

    Scores outside `score_range` go to the end bins (the metric reports them as errors);
    NaN scores go to bin 0. Binary labels > 0 are positive; multiclass labels outside
    `[0, num_classes)` are left out.

    Args:
        labels: Binary labels shaped like `predictions`, or `(N,)` class indices.
        predictions: Binary scores, or `(N, num_classes)` class scores.
        num_bins: Number of equal-width bins over `score_range`.
        score_range: `(low, high)`, both included.
        num_classes: None for binary, else the number of classes.
        out: A contiguous float64 `(K, 2, num_bins)` histogram to add the counts into, in
            place (a metric's state: saves allocating, then adding, a histogram per batch).

    Returns:
        float64 counts of shape `(K, 2, num_bins)`: `[k, 0]` negatives and `[k, 1]` positives
        of class k (K = 1 for binary); `out` itself when given.
    """
    check_int("num_bins", num_bins, 1)
    low, high = check_score_range(score_range)
    size = 2 * num_bins * (1 if num_classes is None else num_classes)
    if out is not None and (
        out.dtype != torch.float64 or out.numel() != size or not out.is_contiguous()
    ):
        raise ValueError(
            f"Argument `out` must be a contiguous float64 tensor of {size} elements "
            f"(K, 2, num_bins). Received: dtype={out.dtype}, shape={tuple(out.shape)}"
        )
    if out is None:
        check_tensor("predictions", predictions)  # before reading its device
        histogram = torch.zeros(size, dtype=torch.float64, device=predictions.device)
    else:
        histogram = out
    add_binned_counts(labels, predictions, num_bins, low, high, num_classes, histogram)
    return histogram if out is not None else histogram.view(-1, 2, num_bins)


def add_binned_counts(
    labels: Tensor,
    predictions: Tensor,
    num_bins: int,
    low: float,
    high: float,
    num_classes: int | None,
    histogram: Tensor,
    *,
    count_errors: bool = False,
) -> ErrorCounts | None:
    """`binned_auroc_update` into a contiguous float64 `histogram` of the right size, for a
    caller that checked `num_bins`, `(low, high)` and the histogram once (a metric's
    constructor) instead of on every batch. The labels and predictions are checked here.

    With `count_errors`, also returns the counts of invalid labels (`invalid_labels`; binary:
    not 0/1, None for bool labels; multiclass: outside `[0, num_classes)`), of non-finite
    scores (binary) or rows with one (multiclass) (`nonfinite_predictions`), and of scores
    outside `[low, high]` (`predictions_outside`), read in the same blocks as the bins (a
    large batch makes no batch-sized check temporaries).
    """
    # rows with a non-finite score for (N, C) class scores; elements otherwise (as before)
    by_rows = num_classes is not None and isinstance(predictions, Tensor) and predictions.dim() == 2
    labels, scores = flatten_scores(labels, predictions, num_classes)
    row = 1 if num_classes is None else num_classes
    rows = blocked(scores, row, from_elements=_BLOCK_FROM, block_elements=_BLOCK)
    if rows is None:
        _add_counts(labels, scores, num_bins, low, high, num_classes, histogram)
        return (
            _count_errors(labels, scores, low, high, num_classes, by_rows) if count_errors else None
        )
    # Eager CPU, a large batch: in blocks, so that the bin indices are cache-sized buffers
    # reused by every block instead of fresh batch-sized allocations.
    totals: ErrorCounts | None = None
    for start in range(0, scores.shape[0], rows):
        stop = start + rows
        piece_labels, piece = labels[start:stop], scores[start:stop]
        _add_counts(piece_labels, piece, num_bins, low, high, num_classes, histogram)
        if not count_errors:
            continue
        counts = _count_errors(piece_labels, piece, low, high, num_classes, by_rows)
        if totals is None:
            totals = counts
        else:
            for kind, total in totals.items():
                count = counts[kind]
                if total is not None and count is not None:
                    total.add_(count)
    return totals


def _count_errors(
    labels: Tensor,
    scores: Tensor,
    low: float,
    high: float,
    num_classes: int | None,
    by_rows: bool,
) -> ErrorCounts:
    # Multiclass: a NaN anywhere in a row shows in its maximum (one reading pass)
    nonfinite = count_nonfinite_rows(scores) if by_rows else count_nonfinite(scores)
    return {
        "invalid_labels": count_invalid_labels(labels, num_classes),
        "nonfinite_predictions": nonfinite,
        "predictions_outside": _count_outside(scores, low, high),
    }


#: From this many scores an eager CPU update works in blocks of about `_BLOCK` scores.
_BLOCK_FROM = 1 << 17
_BLOCK = 1 << 16


def _add_counts(
    labels: Tensor,
    scores: Tensor,
    num_bins: int,
    low: float,
    high: float,
    num_classes: int | None,
    histogram: Tensor,
) -> None:
    x = scores if scores.dtype in (torch.float64, torch.float32) else scores.float()
    # Clamping to [0, num_bins - 1] and then truncating (the integer conversion) is a floor:
    # every step is monotone. The label's offset is added after it, in integers: added to
    # the fraction (2.9999999999999996 + 30 rounds to 33.0) it would put equal scores of a
    # positive and a negative in different bins. int32 indices (`index_add_` takes them):
    # float -> int32 is vectorized on CPU where float -> int64 is not, and half the bytes.
    scale = num_bins / (high - low)
    # x - 0.0 is x: the common (0, 1) range skips the subtraction (x * scale makes the copy)
    bins = (x.mul(scale) if low == 0.0 else x.sub(low).mul_(scale)).nan_to_num_(nan=0.0)
    index_dtype = torch.int32 if histogram.numel() < 1 << 31 else torch.int64
    index = bins.clamp_(0, num_bins - 1).to(index_dtype)
    flat = histogram.view(-1)
    if num_classes is None:
        index.add_(_positive(labels, index_dtype), alpha=num_bins)
        flat.index_add_(0, index, _ones(index.shape[0], flat))
        return
    classes = torch.arange(num_classes, device=index.device, dtype=index_dtype)
    index = index.add_(labels[:, None] == classes, alpha=num_bins)
    index.add_(classes, alpha=2 * num_bins)
    valid = torch.logical_and(labels >= 0, labels < num_classes)
    weight = valid.to(torch.float64)[:, None].expand(index.shape).reshape(-1)
    flat.index_add_(0, index.reshape(-1), weight)


def _positive(labels: Tensor, dtype: torch.dtype) -> Tensor:
    """1 where a binary label is > 0, else 0, as `dtype` integers for integer labels (a clamp
    is one cheap pass where a comparison writes a bool mask, several times slower on CPU;
    and adding a same-dtype tensor is about twice as fast as a mixed int32 + int64 add)."""
    if labels.dtype == torch.bool or labels.is_floating_point() or labels.is_complex():
        return labels > 0
    return labels.clamp(0, 1).to(dtype)


def _ones(count: int, like: Tensor) -> Tensor:
    """`count` float64 ones on `like`'s device: a slice of a cached buffer eagerly on CPU
    (a contiguous source is faster to add than an expanded scalar), else an expanded one."""
    if like.device.type != "cpu" or torch.jit.is_tracing() or tracing(like):
        return like.new_ones(()).expand(count)
    ones = _ONES.get("cpu")
    if ones is None or ones.shape[0] < count:
        ones = _ONES["cpu"] = torch.ones(max(count, 1 << 10), dtype=torch.float64)
    return ones[:count]


#: The cached ones of `_ones`, grown to the largest batch (blocked batches stay below
#: `_BLOCK` plus a row).
_ONES: dict[str, Tensor] = {}


def binned_auroc_compute(histogram: Tensor, average: str = "macro") -> Tensor:
    """AUROC from `(K, 2, num_bins)` histograms, same-bin pairs counting as ties.

    Args:
        histogram: As returned by `binned_auroc_update` (summed over batches).
        average: For K > 1: "macro" (mean over classes with positives and negatives) or
            "none" (per-class values).

    Returns:
        float64: 0-d, or `(K,)` for multiclass `average="none"`.
    """
    check_choice("average", average, AVERAGES)
    negatives, positives = histogram[:, 0], histogram[:, 1]
    below = negatives.cumsum(-1) - negatives
    twice_u = (positives * (2 * below + negatives)).sum(-1)
    return _reduce(twice_u / (2 * _pairs(histogram)), average)


def binned_auroc_error_bound(histogram: Tensor, average: str = "macro") -> Tensor:
    """Bound on |binned AUROC - exact AUROC|: `1/2 * sum_b pos_b * neg_b / (P * N)`.

    Args:
        histogram: `(K, 2, num_bins)` histograms.
        average: As in `binned_auroc_compute`; the macro bound is the mean of the per-class
            bounds (over the classes with positives and negatives).

    Returns:
        float64, shaped like `binned_auroc_compute`'s result.
    """
    check_choice("average", average, AVERAGES)
    same_bin = (histogram[:, 0] * histogram[:, 1]).sum(-1)
    return _reduce(same_bin / (2 * _pairs(histogram)), average)


def binned_auroc(
    labels: Tensor,
    predictions: Tensor,
    num_bins: int,
    score_range: Sequence[float] = (0.0, 1.0),
    num_classes: int | None = None,
    average: str = "macro",
) -> Tensor:
    """AUROC over `num_bins` score bins (constant memory; see the module doc for the bound).

    Args:
        labels: Binary labels shaped like `predictions`, or `(N,)` class indices.
        predictions: Binary scores, or `(N, num_classes)` class scores, within `score_range`.
        num_bins: Number of equal-width bins.
        score_range: `(low, high)` of the scores; probabilities by default.
        num_classes: None for binary, else the number of classes.
        average: "macro" or "none" (multiclass only).

    Returns:
        A float64 tensor.

    Example:
        >>> labels, scores = torch.tensor([1, 0, 0, 1]), torch.tensor([0.1, 0.2, 0.3, 0.8])
        >>> binned_auroc(labels, scores, num_bins=10)
        tensor(0.5000, dtype=torch.float64)
        >>> binned_auroc(labels, scores, num_bins=2)  # exact 0.5, bound 0.25
        tensor(0.7500, dtype=torch.float64)
    """
    histogram = binned_auroc_update(labels, predictions, num_bins, score_range, num_classes)
    return binned_auroc_compute(histogram, average)


def count_out_of_range(scores: Tensor, score_range: Sequence[float]) -> Tensor:
    """Number of scores outside `[low, high]` (a 0-d count; NaN is not counted here)."""
    low, high = check_score_range(score_range)
    return _count_outside(scores, low, high)


def _count_outside(scores: Tensor, low: float, high: float) -> Tensor:
    if (
        eager_at_least(scores, _FLOAT_MASKS_FROM)
        and scores.device.type == "cpu"
        and scores.numel() <= _SUMMED_EXACTLY_UP_TO
        and not tracing(scores)
    ):
        # Eager CPU: comparisons that write float32 0/1 are vectorized where those writing
        # bools are not (about 3x faster here); their float sum is exact below 2**24.
        below = torch.lt(scores, low, out=scores.new_empty(scores.shape, dtype=torch.float32))
        above = torch.gt(scores, high, out=torch.empty_like(below))
        return below.add_(above).sum().to(torch.int64)
    # one count of one mask: four ops where two counts and their sum take five
    return torch.count_nonzero(torch.logical_or(scores < low, scores > high))


#: From this many scores the out-of-range count uses float masks (below, the two extra
#: buffers cost more dispatch than the faster comparisons save).
_FLOAT_MASKS_FROM = 1 << 15
_SUMMED_EXACTLY_UP_TO = 1 << 24


def _pairs(histogram: Tensor) -> Tensor:
    return histogram[:, 0].sum(-1) * histogram[:, 1].sum(-1)


def _reduce(per_class: Tensor, average: str) -> Tensor:
    if per_class.shape[0] == 1:
        return per_class[0]
    return average_classes(per_class, average)
