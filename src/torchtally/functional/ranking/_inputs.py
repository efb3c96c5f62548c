"""Shape checks and label checks shared by the ranking functionals.

Scores are binary when `num_classes` is None (labels 0/1 and one score per sample, any shape,
flattened) and one-vs-rest multiclass otherwise (labels `(N,)` class indices, scores `(N, C)`).
The choice depends on a constructor argument only, never on values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor

from torchtally._errors import check_int
from torchtally.functional._checks import check_same_shape, check_tensor, count_outside

__all__ = [
    "check_score_range",
    "count_invalid_labels",
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
