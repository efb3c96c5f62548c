"""Shape checks and label checks shared by the ranking functionals.

Scores are binary when `num_classes` is None (labels 0/1 and one score per sample, any shape,
flattened) and one-vs-rest multiclass otherwise (labels `(N,)` class indices, scores `(N, C)`).
The choice depends on a constructor argument only, never on values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor

from torchtally._errors import check_int
from torchtally.functional._checks import (
    check_same_shape,
    check_tensor,
    count_nonfinite,
    count_nonfinite_rows,
    count_outside,
)

__all__ = [
    "check_score_range",
    "count_invalid_classes",
    "count_invalid_labels",
    "count_nonfinite_score_rows",
    "flatten_scores",
]


def flatten_scores(
    labels: Tensor, predictions: Tensor, num_classes: int | None
) -> tuple[Tensor, Tensor]:
    """Return `(labels, scores)` as `(N,)` and `(N,)` (binary) or `(N,)` and `(N, C)`.

    Args:
        labels: Binary labels shaped like `predictions`, or class indices `(...)`.
        predictions: Binary scores, or class scores `(..., num_classes)`.
        num_classes: None for binary, else the number of classes.

    Returns:
        The flattened labels and scores (views where possible).
    """
    check_tensor("labels", labels)
    check_tensor("predictions", predictions)
    if labels.is_complex() or predictions.is_complex():
        raise TypeError(
            "Arguments `labels` and `predictions` must be real tensors. Received: "
            f"labels.dtype={labels.dtype}, predictions.dtype={predictions.dtype}"
        )
    check_int("num_classes", num_classes, 2, allow_none=True)
    if num_classes is None:
        check_same_shape("labels", labels, "predictions", predictions)
        if labels.dim() == 1:  # already flat: skip two reshape dispatches per update
            return labels, predictions
        return labels.reshape(-1), predictions.reshape(-1)
    if predictions.dim() < 1 or tuple(predictions.shape) != (*labels.shape, num_classes):
        raise ValueError(
            "Argument `predictions` must have the shape of `labels` plus a trailing dimension "
            f"of size num_classes={num_classes}. Received: labels.shape={tuple(labels.shape)}, "
            f"predictions.shape={tuple(predictions.shape)}"
        )
    if labels.is_floating_point():
        raise TypeError(
            "Argument `labels` must hold integer class indices when num_classes is set. "
            f"Received: labels.dtype={labels.dtype}"
        )
    if labels.dim() == 1:
        return labels, predictions
    return labels.reshape(-1), predictions.reshape(-1, num_classes)


# The counters below use `count_nonzero`: `Tensor.sum` of a bool mask first copies it to
# int64, which costs more than the comparison on the millions of scores AUROC sees.


def count_invalid_labels(labels: Tensor, num_classes: int | None) -> Tensor | None:
    """Labels other than 0 and 1 (binary; None for bool labels, which are always valid), or
    outside `[0, num_classes)` (a 0-d count)."""
    if num_classes is not None:
        return count_outside(labels, 0, num_classes)
    if labels.dtype == torch.bool:
        return None
    if labels.is_floating_point():
        return torch.count_nonzero(torch.logical_and(labels != 0, labels != 1))
    return torch.count_nonzero(labels & -2)  # one pass: zero exactly for 0 and 1


def count_invalid_classes(labels: Tensor, num_classes: int) -> Tensor:
    """`count_outside(labels, 0, num_classes)` (a 0-d count), in one bitwise pass when the
    classes are a power of two: an int32/int64 label is in `[0, 2**k)` iff its bits above the
    lowest k are zero (a negative label has its sign bit set), where clamping and comparing
    the labels take two passes and a slow bool compare (2.4x slower at 2**18 labels)."""
    if labels.dtype in (torch.int64, torch.int32) and num_classes & (num_classes - 1) == 0:
        return torch.count_nonzero(labels & -num_classes)
    return count_outside(labels, 0, num_classes)


#: Up to this many classes, `count_nonfinite_score_rows` takes row maxima with `max_pool1d`:
#: CPU `amax` over a short last dimension is not vectorized (2**18 x 10 float32 scores: 2.3 ms,
#: 7x a copy of them), where pooling windows of `num_classes` scores costs 0.25-0.6x that;
#: from about 32 classes `amax` is faster again (vectorized along the row).
_POOLED_CLASSES = 16
#: Scores pooled per `max_pool1d` call: one window sequence much longer slows down several-fold
#: (2**18 x 10 float32 scores: 12 ms in one call, 3.6 ms in blocks of 2**17 scores, `amax` 5 ms;
#: 2**16 to 2**18 measured alike, 2**20 already 8 ms).
_POOL_BLOCK = 1 << 17


def count_nonfinite_score_rows(scores: Tensor) -> Tensor | None:
    """`count_nonfinite_rows` of `(N, C)` class scores (rows whose maximum is NaN or
    infinite), the same count taken faster for an eager CPU float32/float64 batch of few
    classes: each row's maximum by a pooling window over it (NaN propagates through the
    window's maximum as through `amax`; a row of only -inf has the maximum -inf)."""
    classes = scores.shape[-1] if scores.dim() == 2 else 0
    if (
        1 < classes <= _POOLED_CLASSES
        and scores.shape[0] > 0
        and scores.dtype in (torch.float32, torch.float64)
        and scores.is_contiguous()
        and scores.is_cpu
        and not torch.compiler.is_compiling()
    ):
        flat = scores.view(1, 1, -1)
        step = (_POOL_BLOCK // classes) * classes  # whole rows per block
        if flat.shape[-1] <= step:
            peaks = F.max_pool1d(flat, classes, classes)
        else:
            peaks = torch.cat(
                [
                    F.max_pool1d(flat[..., start : start + step], classes, classes)
                    for start in range(0, flat.shape[-1], step)
                ],
                dim=-1,
            )
        return count_nonfinite(peaks.view(-1))
    return count_nonfinite_rows(scores)


def check_score_range(score_range: Sequence[float]) -> tuple[float, float]:
    """Return `score_range` as `(low, high)` floats, or raise naming the argument."""
    valid = (
        isinstance(score_range, Sequence)
        and len(score_range) == 2
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in score_range)
    )
    if valid:
        low, high = float(score_range[0]), float(score_range[1])
        valid = math.isfinite(low) and math.isfinite(high) and low < high
    if not valid:
        raise ValueError(
            "Argument `score_range` must be a pair (low, high) of finite numbers with "
            f"low < high. Received: score_range={score_range!r}"
        )
    return low, high
