"""Precision-recall curve, ROC curve and average precision: exact or binned; binary,
multiclass (one-vs-rest) and multilabel.

Every task becomes `(N, C)` scores and 0/1 labels (binary: C = 1; multiclass: one-hot labels).

**Binned** (`thresholds`): per class a `(2, T + 1)` float64 histogram of the negatives' and
positives' weight by bucket, the bucket being how many thresholds are <= the score. A sample is
predicted positive at threshold t when score >= t (TorchMetrics' convention), so the counts at
every threshold are suffix sums of the histogram: constant memory, exactly additive.

**Exact**: the scores, labels and weights in a buffer; compute sorts each class's column once.
Thresholds are the distinct scores (scikit-learn's `precision_recall_curve`, `roc_curve` with
`drop_intermediate=False`, and `average_precision_score`):

    AP = sum over thresholds t (descending) of (R(t) - R(t_prev)) * P(t)

The exact AP is fixed-shape (traceable); the exact curves have one point per distinct score, a
data-dependent length, so they are built on the host at compute.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from torchtally._errors import check_choice, check_int
from torchtally.functional._checks import check_tensor

__all__ = [
    "AVERAGES",
    "TASKS",
    "average_precision",
    "binned_average_precision",
    "binned_counts",
    "binned_curve_update",
    "binned_pr_curve",
    "binned_roc",
    "curve_inputs",
    "curve_shapes",
    "curve_thresholds",
    "exact_average_precision",
    "exact_pr_curve",
    "exact_roc",
    "precision_recall_curve",
    "roc_curve",
]

TASKS = ("binary", "multiclass", "multilabel")
AVERAGES = ("macro", "micro", "weighted", "none")


def curve_thresholds(thresholds: int | Sequence[float] | Tensor) -> Tensor:
    """`T` evenly spaced thresholds over [0, 1] for an int, else the given ones (float64,
    sorted ascending, at least 2)."""
    if isinstance(thresholds, int) and not isinstance(thresholds, bool):
        check_int("thresholds", thresholds, 2)
        return torch.linspace(0, 1, thresholds, dtype=torch.float64)
    grid = torch.as_tensor(thresholds, dtype=torch.float64).reshape(-1)
    if grid.numel() < 2 or not bool(torch.all(grid[1:] > grid[:-1])):
        raise ValueError(
            "Argument `thresholds` must be an int >= 2 or at least 2 strictly increasing "
            f"values. Received: thresholds={thresholds!r}"
        )
    return grid


def curve_shapes(
    preds: Tensor, target: Tensor, task: str, num_classes: int | None = None
) -> tuple[Tensor, Tensor]:
    """The inputs checked and laid out, in their own dtypes: `(N, C)` scores (C = 1 for
    binary) and the target as `(N, 1)` (binary), `(N, C)` (multilabel) or `(N,)` class indices
    (multiclass); views where possible."""
    check_choice("task", task, TASKS)
    check_tensor("preds", preds)
    check_tensor("target", target)
    if not preds.is_floating_point():
        raise TypeError(
            f"Argument `preds` must be a floating-point tensor. Received: preds.dtype={preds.dtype}"
        )
    if task == "binary":
        if preds.shape != target.shape:
            raise ValueError(
                "Arguments `preds` and `target` must have the same shape (binary). Received: "
                f"preds.shape={tuple(preds.shape)}, target.shape={tuple(target.shape)}"
            )
        return preds.reshape(-1, 1), target.reshape(-1, 1)
    check_int("num_classes", num_classes, 2)
    assert num_classes is not None
    target_shape = preds.shape[:1] if task == "multiclass" else preds.shape
    if preds.dim() != 2 or preds.shape[1] != num_classes or target.shape != target_shape:
        expected = "(N,)" if task == "multiclass" else f"(N, {num_classes})"
        raise ValueError(
            f"Arguments `preds` and `target` must have shapes (N, {num_classes}) and {expected} "
            f"for task={task!r}. Received: preds.shape={tuple(preds.shape)}, "
            f"target.shape={tuple(target.shape)}"
        )
    if task == "multiclass" and target.is_floating_point():
        raise TypeError(
            f"Argument `target` must hold integer class indices. Received: target.dtype={target.dtype}"
        )
    return preds, target


def curve_inputs(
    preds: Tensor, target: Tensor, task: str, num_classes: int | None = None
) -> tuple[Tensor, Tensor]:
    """`(N, C)` float64 scores and 0/1 float64 labels for any task."""
    scores, target = curve_shapes(preds, target, task, num_classes)
    scores = scores.to(torch.float64)
    if task != "multiclass":
        return scores, target.to(torch.float64)
    assert num_classes is not None
    classes = torch.arange(num_classes, device=target.device)
    return scores, (target[:, None] == classes).to(torch.float64)


def _row_weights(weights: Tensor | None, rows: int, device: torch.device) -> Tensor:
    if weights is None:
        return torch.ones(rows, dtype=torch.float64, device=device)
    check_tensor("weights", weights)
    if weights.dim() == 0:
        return weights.to(torch.float64).expand(rows)
    if weights.numel() != rows:
        raise ValueError(
            f"Argument `weights` must be a scalar or hold one weight per sample ({rows}). "
            f"Received: weights.shape={tuple(weights.shape)}"
        )
    return weights.reshape(-1).to(torch.float64)


def binned_curve_update(
    scores: Tensor, labels: Tensor, thresholds: Tensor, weights: Tensor | None = None
) -> Tensor:
    """`(C, 2, T + 1)` float64 histogram of negative / positive weight per bucket.

    `thresholds` ascending (ties allowed), compared in their own dtype; `weights` a scalar,
    one per row, or one per cell (shaped like `scores`: TorchMetrics' multilabel
    `ignore_index` leaves out single labels)."""
    rows, classes = scores.shape
    if weights is not None and weights.dim() == 2 and weights.shape == scores.shape:
        cells = weights.to(torch.float64)
    else:
        cells = _row_weights(weights, rows, scores.device)[:, None].expand(rows, classes)
    bucket = torch.bucketize(scores, thresholds.to(scores.device), right=True)
    positive = (labels > 0).to(torch.float64)
    kind = positive.to(torch.int64)  # 0 negative, 1 positive
    width = thresholds.shape[0] + 1
    column = torch.arange(classes, device=scores.device)[None, :]
    flat = (column * 2 + kind) * width + bucket
    hist = torch.zeros(classes * 2 * width, dtype=torch.float64, device=scores.device)
    hist.scatter_add_(0, flat.reshape(-1), cells.reshape(-1))
    return hist.reshape(classes, 2, width)


def binned_counts(
    hist: Tensor, order: Tensor | None = None
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """`(tps, fps, positives, negatives)`: `(C, T)` weights predicted positive at each
    threshold (score >= t), and `(C, 1)` totals.

    Args:
        order: The thresholds' order to report (TorchMetrics keeps a list of thresholds in
            the order given): `order[i]` is the ascending position of threshold i. None:
            ascending.
    """
    # suffix sums: weight of buckets > j, i.e. scores >= threshold j
    suffix = hist.flip(-1).cumsum(-1).flip(-1)[..., 1:]
    if order is not None:
        suffix = suffix.index_select(-1, order.to(suffix.device))
    return suffix[:, 1], suffix[:, 0], hist[:, 1].sum(-1, keepdim=True), hist[:, 0].sum(-1, True)


def _micro(hist: Tensor) -> Tensor:
    return hist.sum(0, keepdim=True)


def binned_pr_curve(
    hist: Tensor, thresholds: Tensor, order: Tensor | None = None
) -> tuple[Tensor, Tensor, Tensor]:
    """Precision `(C, T + 1)`, recall `(C, T + 1)` (a last point (1, 0) appended, as
    TorchMetrics) and the `(T,)` thresholds. Precision is NaN where nothing is predicted
    positive; recall NaN without positives. `order`: as `binned_counts` (`thresholds` then
    in that order)."""
    tps, fps, positives, _ = binned_counts(hist, order)
    precision = tps / (tps + fps)
    recall = tps / positives
    one = torch.ones_like(precision[:, :1])
    return torch.cat([precision, one], 1), torch.cat([recall, one * 0], 1), thresholds


def binned_roc(
    hist: Tensor, thresholds: Tensor, order: Tensor | None = None
) -> tuple[Tensor, Tensor, Tensor]:
    """FPR `(C, T)`, TPR `(C, T)` and thresholds, by decreasing threshold (TorchMetrics'
    binned ROC); a rate without positives (negatives) is 0. `order`: as `binned_counts`
    (the points then in the reverse of that order)."""
    tps, fps, positives, negatives = binned_counts(hist, order)
    tpr = torch.where(positives > 0, tps / positives.clamp(min=1e-300), 0.0)
    fpr = torch.where(negatives > 0, fps / negatives.clamp(min=1e-300), 0.0)
    return fpr.flip(-1), tpr.flip(-1), thresholds.flip(0)


def _average(values: Tensor, support: Tensor, average: str) -> Tensor:
    if average == "none":
        return values
    if average == "weighted":
        return (values * support).sum() / support.sum()
    return values.mean() if average == "macro" else values[0]


def binned_average_precision(
    hist: Tensor, thresholds: Tensor, average: str = "macro", order: Tensor | None = None
) -> Tensor:
    """AP from binned counts, as TorchMetrics' binned `AveragePrecision`:
    `-sum((R[1:] - R[:-1]) * P[:-1])` over the curve with NaN set to 0 (`order`: as
    `binned_counts`)."""
    check_choice("average", average, AVERAGES)
    source = _micro(hist) if average == "micro" else hist
    precision, recall, _ = binned_pr_curve(source, thresholds, order)
    precision, recall = torch.nan_to_num(precision), torch.nan_to_num(recall)
    values = -((recall[:, 1:] - recall[:, :-1]) * precision[:, :-1]).sum(-1)
    return _average(values, source[:, 1].sum(-1), average)


def _sorted_columns(
    scores: Tensor, labels: Tensor, weights: Tensor
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Per column, descending: sorted scores, cumulative TP / FP weight, tie-group ends."""
    sorted_scores, order = torch.sort(scores, dim=0, descending=True, stable=True)
    w = weights[:, None].expand_as(scores).gather(0, order)
    positive = labels.gather(0, order)
    tps = torch.cumsum(w * positive, 0)
    fps = torch.cumsum(w * (1 - positive), 0)
    is_end = torch.ones_like(sorted_scores, dtype=torch.bool)
    is_end[:-1] = sorted_scores[:-1] != sorted_scores[1:]
    return sorted_scores, tps, fps, is_end


def exact_average_precision(
    scores: Tensor,
    labels: Tensor,
    weights: Tensor | None = None,
    average: str = "macro",
) -> Tensor:
    """scikit-learn's `average_precision_score` (exact; fixed shapes, no host sync).

    Args:
        scores: `(N, C)` scores (rows of weight 0 do not count).
        labels: `(N, C)` 0/1 labels.
        weights: Optional `(N,)` sample weights.
        average: "macro", "micro", "weighted" (by positives) or "none".

    Returns:
        0-d (or `(C,)` for "none") float64; NaN for a class with no positive.
    """
    check_choice("average", average, AVERAGES)
    w = _row_weights(weights, scores.shape[0], scores.device)
    if average == "micro":
        classes = scores.shape[1]
        scores, labels = scores.reshape(-1, 1), labels.reshape(-1, 1)
        w = w.repeat_interleave(classes)
    if scores.shape[0] == 0:
        values = torch.full(scores.shape[1:], float("nan"), dtype=torch.float64)
        return _average(values, values, average)
    _, tps, fps, is_end = _sorted_columns(scores, labels, w)
    rows = scores.shape[0]
    index = torch.arange(rows, device=scores.device)[:, None].expand_as(tps)
    # Each sample's tie group ends at the next tie-group end at or after it.
    ends = torch.where(is_end, index, rows).flip(0).cummin(0).values.flip(0)
    predicted = tps + fps
    precision = torch.where(predicted > 0, tps / predicted.clamp(min=1e-300), 0.0)
    gain = torch.diff(tps, dim=0, prepend=torch.zeros_like(tps[:1]))  # this sample's TP weight
    positives = tps[-1]
    values = (gain * precision.gather(0, ends)).sum(0) / positives
    return _average(values, positives, average)


def _exact_points(
    scores: Tensor, labels: Tensor, weights: Tensor | None
) -> list[tuple[Tensor, Tensor, Tensor]]:
    """Per column: (thresholds, tps, fps) at the distinct scores, descending (host work).
    Samples of weight 0 are left out, as scikit-learn: they would add thresholds."""
    w = _row_weights(weights, scores.shape[0], scores.device)
    kept = w != 0
    scores, labels, w = scores[kept], labels[kept], w[kept]
    sorted_scores, tps, fps, is_end = _sorted_columns(scores, labels, w)
    points = []
    for c in range(scores.shape[1]):
        keep = is_end[:, c]
        points.append((sorted_scores[keep, c], tps[keep, c], fps[keep, c]))
    return points


def exact_pr_curve(
    scores: Tensor, labels: Tensor, weights: Tensor | None = None
) -> list[tuple[Tensor, Tensor, Tensor]]:
    """Per column: scikit-learn's `precision_recall_curve` (precision, recall, thresholds)."""
    curves = []
    for thresholds, tps, fps in _exact_points(scores, labels, weights):
        predicted = tps + fps
        precision = torch.where(predicted > 0, tps / predicted.clamp(min=1e-300), 0.0)
        total = tps[-1:] if tps.numel() else tps.new_zeros(1)
        recall = torch.where(total > 0, tps / total.clamp(min=1e-300), 1.0)
        one = precision.new_ones(1)
        curves.append(
            (
                torch.cat([precision.flip(0), one]),
                torch.cat([recall.flip(0), one * 0]),
                thresholds.flip(0),
            )
        )
    return curves


def exact_roc(
    scores: Tensor, labels: Tensor, weights: Tensor | None = None
) -> list[tuple[Tensor, Tensor, Tensor]]:
    """Per column: scikit-learn's `roc_curve(drop_intermediate=False)` (fpr, tpr,
    thresholds, the first threshold +inf); a rate without positives (negatives) is NaN."""
    curves = []
    for thresholds, tps, fps in _exact_points(scores, labels, weights):
        zero = tps.new_zeros(1)
        tps, fps = torch.cat([zero, tps]), torch.cat([zero, fps])
        inf = thresholds.new_full((1,), float("inf"))
        curves.append((fps / fps[-1], tps / tps[-1], torch.cat([inf, thresholds])))
    return curves


def _one_batch(
    preds: Tensor,
    target: Tensor,
    task: str,
    num_classes: int | None,
    weights: Tensor | None,
) -> tuple[Tensor, Tensor, Tensor]:
    scores, labels = curve_inputs(preds, target, task, num_classes)
    return scores, labels, _row_weights(weights, scores.shape[0], scores.device)


def average_precision(
    preds: Tensor,
    target: Tensor,
    task: str = "binary",
    num_classes: int | None = None,
    average: str = "macro",
    thresholds: int | Sequence[float] | Tensor | None = None,
    weights: Tensor | None = None,
) -> Tensor:
    """Average precision of one batch: exact (scikit-learn) or binned (`thresholds`,
    TorchMetrics).

    Example:
        >>> preds = torch.tensor([0.1, 0.4, 0.35, 0.8])
        >>> average_precision(preds, torch.tensor([0, 0, 1, 1]))
        tensor(0.8333, dtype=torch.float64)
    """
    scores, labels, w = _one_batch(preds, target, task, num_classes, weights)
    if task == "binary":
        average = "macro"
    if thresholds is None:
        return exact_average_precision(scores, labels, w, average)
    grid = curve_thresholds(thresholds).to(scores.device)
    return binned_average_precision(binned_curve_update(scores, labels, grid, w), grid, average)


def precision_recall_curve(
    preds: Tensor,
    target: Tensor,
    task: str = "binary",
    num_classes: int | None = None,
    thresholds: int | Sequence[float] | Tensor | None = None,
    weights: Tensor | None = None,
) -> tuple[Tensor, Tensor, Tensor] | list[tuple[Tensor, Tensor, Tensor]]:
    """Precision-recall curve of one batch: binary `(precision, recall, thresholds)`, or a
    list of them per class. Exact (scikit-learn) or binned (`thresholds`, TorchMetrics).

    Example:
        >>> p, r, t = precision_recall_curve(torch.tensor([0.1, 0.4, 0.8]), torch.tensor([0, 1, 1]))
        >>> p, r
        (tensor([0.6667, 1.0000, 1.0000, 1.0000], dtype=torch.float64), tensor([1.0000, 1.0000, 0.5000, 0.0000], dtype=torch.float64))
    """
    scores, labels, w = _one_batch(preds, target, task, num_classes, weights)
    if thresholds is None:
        curves = exact_pr_curve(scores, labels, w)
    else:
        grid = curve_thresholds(thresholds).to(scores.device)
        p, r, t = binned_pr_curve(binned_curve_update(scores, labels, grid, w), grid)
        curves = [(p[c], r[c], t) for c in range(p.shape[0])]
    return curves[0] if task == "binary" else curves


def roc_curve(
    preds: Tensor,
    target: Tensor,
    task: str = "binary",
    num_classes: int | None = None,
    thresholds: int | Sequence[float] | Tensor | None = None,
    weights: Tensor | None = None,
) -> tuple[Tensor, Tensor, Tensor] | list[tuple[Tensor, Tensor, Tensor]]:
    """ROC curve of one batch: binary `(fpr, tpr, thresholds)`, or a list of them per class.
    Exact (scikit-learn, `drop_intermediate=False`) or binned (`thresholds`, TorchMetrics).

    Example:
        >>> fpr, tpr, t = roc_curve(torch.tensor([0.1, 0.4, 0.8]), torch.tensor([0, 1, 1]))
        >>> fpr, tpr
        (tensor([0., 0., 0., 1.], dtype=torch.float64), tensor([0.0000, 0.5000, 1.0000, 1.0000], dtype=torch.float64))
    """
    scores, labels, w = _one_batch(preds, target, task, num_classes, weights)
    if thresholds is None:
        curves = exact_roc(scores, labels, w)
    else:
        grid = curve_thresholds(thresholds).to(scores.device)
        f, t_, g = binned_roc(binned_curve_update(scores, labels, grid, w), grid)
        curves = [(f[c], t_[c], g) for c in range(f.shape[0])]
    return curves[0] if task == "binary" else curves
