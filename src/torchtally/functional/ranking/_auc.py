"""Thresholded AUC (Cerebras' `AUCMetric`, after TensorFlow's `tf.compat.v1.metrics.auc`).

Predictions in [0, 1] are compared with fixed thresholds `[-eps, t_1, ..., t_{T-2}, 1 + eps]`
(`t_i = i / (T - 1)` by default, eps = 1e-7); at each threshold a prediction above it counts
as positive, giving TP, FP, TN, FN per threshold, and the area under the resulting ROC (FPR,
TPR) or PR (recall, precision) curve is a Riemann sum over consecutive thresholds.

The state is not the four `(T,)` confusion vectors but a `(2, T + 1)` histogram: the weight
of negatives and positives per bucket, a prediction's bucket being the number of thresholds
strictly below it (one `searchsorted` and one `scatter_add_` per batch instead of a
`(T, N)` comparison). The confusion counts are its suffix and prefix sums.

Following cstorch (not TF 1.x, which adds 1e-6 to numerators and denominators), ratios
with a zero denominator are 0, "interpolation" is the trapezoidal rule for ROC and the
Davis & Goadrich interpolation for PR; thresholds are float32 values, as in cstorch.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from torchtally._errors import check_choice, check_int
from torchtally.functional._checks import check_same_shape, check_tensor

__all__ = [
    "CURVES",
    "SUMMATION_METHODS",
    "auc",
    "auc_compute",
    "auc_thresholds",
    "auc_update",
    "broadcast_weights",
    "confusion_at_thresholds",
]

CURVES = ("ROC", "PR")
#: "careful_interpolation" is TF's name for cstorch's "interpolation".
SUMMATION_METHODS = ("interpolation", "minoring", "majoring", "careful_interpolation")
_EPSILON = 1e-7


def auc_thresholds(num_thresholds: int = 200, thresholds: Sequence[float] | None = None) -> Tensor:
    """The `(T,)` float64 thresholds (float32 values), end points included.

    Args:
        num_thresholds: T, used when `thresholds` is None; at least 2.
        thresholds: Inner thresholds in [0, 1] (sorted here); then T = len(thresholds) + 2.

    Returns:
        `[-1e-7, *inner, 1 + 1e-7]` as float32 values stored in float64.

    Example:
        >>> auc_thresholds(3).tolist()[1]
        0.5
    """
    if thresholds is None:
        check_int("num_thresholds", num_thresholds, 2)
        inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    else:
        valid = isinstance(thresholds, Sequence) and all(
            isinstance(t, (int, float)) and not isinstance(t, bool) and 0.0 <= t <= 1.0
            for t in thresholds
        )
        if not valid:
            raise ValueError(
                "Argument `thresholds` must be a sequence of numbers in [0, 1] or None. "
                f"Received: thresholds={thresholds!r}"
            )
        inner = sorted(float(t) for t in thresholds)
    values = [-_EPSILON, *inner, 1.0 + _EPSILON]
    return torch.tensor(values, dtype=torch.float32).double()


def broadcast_weights(weights: Tensor | None, labels: Tensor) -> Tensor | None:
    """`weights` broadcast to `labels`' shape (None stays None); raises if they don't fit."""
    if weights is None:
        return None
    check_tensor("weights", weights)
    try:
        return torch.broadcast_to(weights, labels.shape)
    except RuntimeError:
        raise ValueError(
            "Argument `weights` must be broadcastable to the shape of `labels`. Received: "
            f"weights.shape={tuple(weights.shape)}, labels.shape={tuple(labels.shape)}"
        ) from None


def auc_update(
    labels: Tensor, predictions: Tensor, thresholds: Tensor, weights: Tensor | None = None
) -> Tensor:
    """One batch's `(2, T + 1)` float64 histogram: `[0]` negatives, `[1]` positives.

    Args:
        labels: Binary labels (values > 0 are positive, as in cstorch).
        predictions: Scores in [0, 1], shaped like `labels`.
        thresholds: `(T,)` sorted thresholds (see `auc_thresholds`).
        weights: Optional weights broadcastable to `labels`.

    Returns:
        The weight of each label per bucket; bucket b holds predictions above exactly b
        thresholds. NaN predictions go to bucket 0.
    """
    check_tensor("labels", labels)
    check_tensor("predictions", predictions)
    check_same_shape("labels", labels, "predictions", predictions)
    wide = broadcast_weights(weights, labels)
    buckets = thresholds.shape[0] + 1
    scores = predictions.reshape(-1).to(thresholds.dtype).nan_to_num(nan=0.0)
    # side="left": the number of thresholds strictly below the score, i.e. those it is "above".
    index = torch.searchsorted(thresholds, scores)
    index.add_((labels.reshape(-1) > 0).long(), alpha=buckets)
    if wide is None:
        source = index.new_ones((), dtype=torch.float64).expand(index.shape[0])
    else:
        source = wide.reshape(-1).to(torch.float64)
    histogram = torch.zeros(2 * buckets, dtype=torch.float64, device=index.device)
    return histogram.scatter_add_(0, index, source).view(2, buckets)


def auc_compute(
    histogram: Tensor, curve: str = "ROC", summation_method: str = "interpolation"
) -> Tensor:
    """The AUC from a `(2, T + 1)` histogram.

    Args:
        histogram: Summed `auc_update` results.
        curve: "ROC" or "PR".
        summation_method: "interpolation" (trapezoids for ROC; for PR, interpolating TP and
            FP linearly between thresholds), "minoring" (lower heights), "majoring" (upper
            heights), or "careful_interpolation" (same as "interpolation").

    Returns:
        A 0-d float64 tensor.
    """
    check_choice("curve", curve, CURVES)
    check_choice("summation_method", summation_method, SUMMATION_METHODS)
    tp, fp, tn, fn = confusion_at_thresholds(histogram)
    interpolate = summation_method in ("interpolation", "careful_interpolation")
    if curve == "PR" and interpolate:
        return _interpolated_pr_auc(tp, fp, fn)
    recall = _divide_no_nan(tp, tp + fn)
    if curve == "ROC":
        x, y = _divide_no_nan(fp, fp + tn), recall
    else:
        x, y = recall, _divide_no_nan(tp, tp + fp)
    if interpolate:
        heights = (y[:-1] + y[1:]) / 2
    elif summation_method == "minoring":
        heights = torch.minimum(y[:-1], y[1:])
    else:
        heights = torch.maximum(y[:-1], y[1:])
    return ((x[:-1] - x[1:]) * heights).sum()


def confusion_at_thresholds(histogram: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """`(tp, fp, tn, fn)`, each `(T,)`: at threshold t the predictions above it are positive."""
    negatives, positives = histogram[0], histogram[1]
    # Suffix sums add only non-negative terms, so TP and FP never go negative by round-off.
    above_pos = positives.flip(0).cumsum(0).flip(0)[1:]
    above_neg = negatives.flip(0).cumsum(0).flip(0)[1:]
    return above_pos, above_neg, negatives.cumsum(0)[:-1], positives.cumsum(0)[:-1]


def auc(
    labels: Tensor,
    predictions: Tensor,
    weights: Tensor | None = None,
    num_thresholds: int = 200,
    curve: str = "ROC",
    summation_method: str = "interpolation",
    thresholds: Sequence[float] | None = None,
) -> Tensor:
    """Thresholded ROC-AUC or PR-AUC of one batch (cstorch `AUCMetric` / TF `metrics.auc`).

    Args:
        labels: Binary labels (values > 0 are positive).
        predictions: Scores in [0, 1], shaped like `labels`.
        weights: Optional weights broadcastable to `labels`; 0 masks a value.
        num_thresholds: Number of thresholds, end points included (>= 2).
        curve: "ROC" or "PR".
        summation_method: "interpolation", "minoring", "majoring" or "careful_interpolation".
        thresholds: Explicit inner thresholds in [0, 1]; overrides `num_thresholds`.

    Returns:
        A 0-d float64 tensor.

    Example:
        >>> labels, scores = torch.tensor([0, 0, 1, 1]), torch.tensor([0.1, 0.6, 0.4, 0.9])
        >>> auc(labels, scores, num_thresholds=3)
        tensor(0.5000, dtype=torch.float64)
        >>> auc(labels, scores, num_thresholds=3, summation_method="majoring")
        tensor(0.7500, dtype=torch.float64)
    """
    grid = auc_thresholds(num_thresholds, thresholds).to(predictions.device)
    return auc_compute(auc_update(labels, predictions, grid, weights), curve, summation_method)


def _divide_no_nan(numerator: Tensor, denominator: Tensor) -> Tensor:
    safe = torch.where(denominator == 0, 1.0, denominator)
    return torch.where(denominator == 0, 0.0, numerator / safe)


def _interpolated_pr_auc(tp: Tensor, fp: Tensor, fn: Tensor) -> Tensor:
    """PR-AUC interpolating TP and P = TP + FP linearly between thresholds (Davis & Goadrich
    2006): on each interval precision is `(TP_A + slope * (P - P_A)) / P`, whose integral over
    recall has the closed form below (TF's and cstorch's `interpolate_pr_auc`)."""
    dtp = tp[:-1] - tp[1:]
    predicted = tp + fp
    slope = _divide_no_nan(dtp, (predicted[:-1] - predicted[1:]).clamp(min=0))
    intercept = tp[1:] - slope * predicted[1:]
    both_positive = torch.logical_and(predicted[:-1] > 0, predicted[1:] > 0)
    ratio = torch.where(
        both_positive, _divide_no_nan(predicted[:-1], predicted[1:].clamp(min=0)), 1.0
    )
    area = slope * (dtp + intercept * torch.log(ratio))
    return _divide_no_nan(area, (tp[1:] + fn[1:]).clamp(min=0)).sum()
