"""Confusion-matrix statistics with TorchMetrics 1.9's input conventions, without host syncs.

Every classification metric of the compatibility layer keeps one confusion matrix as its state:
`(2, 2)` for binary, `(C, C)` for multiclass (rows: target, columns: prediction) and
`(L, 2, 2)` for multilabel. Accuracy, precision, recall, F-beta, specificity, Hamming distance,
stat scores, Jaccard, Matthews and Cohen's kappa are all functions of it, so a batch folds in
with a single `index_add_` and the state syncs with one summed collective.

TorchMetrics' conventions that these functions reproduce:

* the argument order is `(preds, target)`;
* float binary/multilabel predictions outside [0, 1] are logits and go through a sigmoid, decided
  per batch over the whole tensor (here with `torch.where`, never a host read), then `> threshold`;
* multiclass scores are `(N, C, ...)` (class dimension 1, as in NCHW) and reduced by argmax; with
  `top_k > 1` a sample whose target is among its top k scores counts as predicting the target,
  otherwise as predicting its top-1 class (TorchMetrics 1.9's refinement);
* positions whose target equals `ignore_index` are left out of every count.

Invalid values (a target that is neither a class nor `ignore_index`, an integer prediction out of
range) are left out of the counts and counted separately, so the metric can raise at compute.
"""

from __future__ import annotations

import torch
from torch import Tensor

from torchtally.functional.classification import (
    add_confusion,
    class_rows_of,
    confusion_matrix_compute,
    fbeta_ratio,
    positive_scores,
    precision_ratio,
    recall_ratio,
    safe_divide,
    score_probabilities,
    seen_classes,
    weighted_class_mean,
)

__all__ = [
    "CLASS_COUNT_FREE",
    "binary_confmat_update",
    "cohen_kappa_from_confmat",
    "confmat_normalize",
    "exact_match_update",
    "jaccard_from_confmat",
    "matthews_from_confmat",
    "micro_stat_rows",
    "multiclass_confmat_update",
    "multilabel_confmat_update",
    "reduce_stat_counts",
    "reduce_stat_scores",
    "safe_divide",
    "sigmoid_if_logits",
    "stat_counts",
    "stat_rows",
    "stat_scores_from_confmat",
    "stat_scores_table",
    "stat_scores_table_from_counts",
    "weighted_average",
]


#: The statistics whose micro average needs no class count (TorchMetrics takes
#: `num_classes=None` for them; the others' true negatives depend on it).
CLASS_COUNT_FREE = ("accuracy", "precision", "recall", "fbeta", "hamming")


def sigmoid_if_logits(preds: Tensor) -> Tensor:
    """Probabilities from `preds`: the sigmoid if any value lies outside [0, 1] (a NaN
    included, as TorchMetrics decides), else `preds` (native `score_probabilities`).

    Example:
        >>> sigmoid_if_logits(torch.tensor([0.2, 0.9]))
        tensor([0.2000, 0.9000])
        >>> sigmoid_if_logits(torch.tensor([-2.0, 3.0])).round(decimals=3)
        tensor([0.1190, 0.9530])
    """
    return score_probabilities(preds, "auto", nan_outside=True)


def _binary_predictions(preds: Tensor, threshold: float) -> tuple[Tensor, Tensor]:
    """0/1 predictions (int64) and a mask of the valid ones (integer predictions must be 0/1)."""
    if preds.is_floating_point():
        predicted = positive_scores(preds, threshold, "auto", nan_outside=True).long()
        return predicted, torch.ones_like(predicted, dtype=torch.bool)
    predicted = preds.long()
    valid = (predicted == 0) | (predicted == 1)
    return predicted.clamp(0, 1), valid


def _targets(target: Tensor, high: int, ignore_index: int | None) -> tuple[Tensor, Tensor, Tensor]:
    """Clamped targets, the mask of counted positions and the count of invalid targets."""
    in_range = (target >= 0) & (target < high)
    if target.is_floating_point():
        # Float 0./1. targets are accepted (BCE-style); 0.7 is an error, not a truncated 0.
        in_range = in_range & (target == target.floor())
    target = target.long()
    if ignore_index is None:
        return target.clamp(0, high - 1), in_range, (~in_range).sum()
    # An ignore_index inside the class range still removes those positions (TorchMetrics).
    ignored = target == ignore_index
    counted = in_range & ~ignored
    return target.clamp(0, high - 1), counted, (~in_range & ~ignored).sum()


def _sample_offsets(like: Tensor, cells: int) -> Tensor:
    """The first cell of each sample's block of `cells` cells, shaped to broadcast against
    `like` (`(N, ...)`, sample-major)."""
    samples = like.shape[0]
    first = torch.arange(0, samples * cells, cells, device=like.device)
    return first.view(samples, *([1] * (like.dim() - 1)))


def binary_confmat_update(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    ignore_index: int | None = None,
    samplewise: bool = False,
) -> tuple[Tensor, Tensor]:
    """The `(2, 2)` int64 confusion matrix of one binary batch and the count of invalid values;
    with `samplewise`, one matrix per sample along dimension 0: `(N, 2, 2)`.

    Example:
        >>> binary_confmat_update(torch.tensor([0.9, 0.2, 0.7]), torch.tensor([1, 0, 0]))[0]
        tensor([[1, 1],
                [0, 1]])
    """
    predicted, valid_pred = _binary_predictions(preds, threshold)
    target_c, counted, invalid = _targets(target, 2, ignore_index)
    keep = (counted & valid_pred).long()
    blocks = preds.shape[0] if samplewise else 1
    offset = _sample_offsets(target_c, 4) if samplewise else None
    confmat = torch.zeros((blocks, 2, 2), dtype=torch.int64, device=preds.device)
    add_confusion(target_c, predicted, keep, 2, confmat, offset)
    return confmat if samplewise else confmat[0], invalid + (~valid_pred).sum()


def _multiclass_predictions(
    preds: Tensor, target: Tensor, num_classes: int, top_k: int
) -> tuple[Tensor, Tensor]:
    """Predicted class per position (flat) and a mask of the valid integer predictions."""
    if preds.dim() == target.dim() + 1:
        scores = preds.movedim(1, -1).reshape(-1, num_classes)
        if top_k == 1:
            predicted = scores.argmax(-1)
        else:
            top = scores.topk(top_k, dim=-1).indices
            flat_target = target.reshape(-1, 1).long()
            hit = (top == flat_target).any(-1)
            predicted = torch.where(hit, flat_target.squeeze(-1), top[:, 0])
        return predicted, torch.ones_like(predicted, dtype=torch.bool)
    predicted = preds.reshape(-1).long()
    valid = (predicted >= 0) & (predicted < num_classes)
    return predicted.clamp(0, num_classes - 1), valid


def multiclass_confmat_update(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    top_k: int = 1,
    ignore_index: int | None = None,
    samplewise: bool = False,
) -> tuple[Tensor, Tensor]:
    """The `(C, C)` int64 confusion matrix (rows: target) of one batch and the invalid count;
    with `samplewise`, one matrix per sample along dimension 0: `(N, C, C)`.

    Example:
        >>> scores = torch.tensor([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]])
        >>> multiclass_confmat_update(scores, torch.tensor([1, 1, 0]), 2)[0]
        tensor([[0, 1],
                [1, 1]])
    """
    predicted, valid_pred = _multiclass_predictions(preds, target, num_classes, top_k)
    target_c, counted, invalid = _targets(target.reshape(-1), num_classes, ignore_index)
    keep = (counted & valid_pred).long()
    blocks = target.shape[0] if samplewise else 1
    offset = None
    if samplewise:
        offset = _sample_offsets(target, num_classes * num_classes).expand(target.shape)
        offset = offset.reshape(-1)
    confmat = torch.zeros(
        (blocks, num_classes, num_classes), dtype=torch.int64, device=preds.device
    )
    add_confusion(target_c, predicted, keep, num_classes, confmat, offset)
    return confmat if samplewise else confmat[0], invalid + (~valid_pred).sum()


def _labels_last(x: Tensor, num_labels: int) -> Tensor:
    """`(N, L, ...)` to `(rows, L)`: every extra position is one more row."""
    return x.movedim(1, -1).reshape(-1, num_labels)


def multilabel_confmat_update(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    threshold: float = 0.5,
    ignore_index: int | None = None,
    samplewise: bool = False,
) -> tuple[Tensor, Tensor]:
    """The `(L, 2, 2)` int64 per-label confusion matrices of one batch and the invalid count;
    with `samplewise`, one set per sample along dimension 0: `(N, L, 2, 2)`.

    Example:
        >>> preds = torch.tensor([[0.9, 0.1], [0.8, 0.6]])
        >>> multilabel_confmat_update(preds, torch.tensor([[1, 0], [0, 1]]), 2)[0][1]
        tensor([[1, 0],
                [0, 1]])
    """
    predicted, valid_pred = _binary_predictions(preds, threshold)
    target_c, counted, invalid = _targets(target, 2, ignore_index)
    keep = (counted & valid_pred).long()
    # each label's (2, 2) matrix: 4 cells from its first, along dimension 1 of (N, L, ...)
    shape = [1] * preds.dim()
    shape[1] = num_labels
    offset = torch.arange(0, 4 * num_labels, 4, device=preds.device).view(shape)
    blocks = preds.shape[0] if samplewise else 1
    if samplewise:
        offset = offset + _sample_offsets(preds, 4 * num_labels)
    confmat = torch.zeros((blocks, num_labels, 2, 2), dtype=torch.int64, device=preds.device)
    add_confusion(target_c, predicted, keep, 2, confmat, offset)
    return confmat if samplewise else confmat[0], invalid + (~valid_pred).sum()


def exact_match_update(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    *,
    multilabel: bool,
    threshold: float = 0.5,
    ignore_index: int | None = None,
    samplewise: bool = False,
) -> tuple[Tensor, Tensor, Tensor]:
    """Correct and total sample counts (int64, 0-d) of one batch, plus the invalid count.

    Multiclass: a sample `(N, ...)` is correct when every non-ignored position is right.
    Multilabel: every `(sample, extra position)` row of labels is one sample, correct when all
    of its non-ignored labels are right (TorchMetrics' "global" convention).
    With `samplewise`, correct and total are `(N,)`: per sample, its correct rows (multilabel) or
    whether it is correct (multiclass), and 1 or its row count.
    """
    if multilabel:
        predicted, valid_pred = _binary_predictions(preds, threshold)
        target_c, counted, invalid = _targets(target, 2, ignore_index)
        right = (predicted == target_c) | ~counted
        rows = _labels_last(right, num_classes).all(-1)
        if samplewise:
            per_sample = rows.reshape(preds.shape[0], -1)
            total = torch.full_like(per_sample[:, 0], per_sample.shape[1], dtype=torch.int64)
            return per_sample.sum(-1), total, invalid
        # torch.full, not torch.tensor: a copy of a host tensor to a GPU synchronizes
        return rows.sum(), torch.full((), rows.numel(), device=preds.device), invalid
    if preds.dim() == target.dim() + 1:
        predicted = preds.argmax(1)
        valid_pred = torch.ones_like(predicted, dtype=torch.bool)
    else:
        predicted = preds.long()
        valid_pred = (predicted >= 0) & (predicted < num_classes)
    target_c, counted, invalid = _targets(target, num_classes, ignore_index)
    right = ((predicted == target_c) & valid_pred) | ~counted
    samples = right.reshape(right.shape[0], -1).all(-1)
    if samplewise:
        ones = torch.ones_like(samples, dtype=torch.int64)
        return samples.long(), ones, invalid + (~valid_pred).sum()
    total = torch.full((), samples.numel(), device=preds.device)
    return samples.sum(), total, invalid + (~valid_pred).sum()


# --------------------------------------------------------------------------- reductions


def stat_scores_from_confmat(confmat: Tensor, task: str) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """`(tp, fp, tn, fn)`: 0-d for binary, `(C,)` per class or label otherwise; leading
    dimensions of `confmat` (one matrix per sample) lead in each."""
    if task in ("binary", "multilabel"):
        return confmat[..., 1, 1], confmat[..., 0, 1], confmat[..., 0, 0], confmat[..., 1, 0]
    tp, predicted, actual = class_rows_of(confmat)
    fp = predicted - tp
    fn = actual - tp
    tn = confmat.sum((-2, -1)).unsqueeze(-1) - (tp + fp + fn)
    return tp, fp, tn, fn


def weighted_average(
    score: Tensor,
    average: str | None,
    *,
    multilabel: bool,
    tp: Tensor,
    fp: Tensor,
    fn: Tensor,
    top_k: int = 1,
) -> Tensor:
    """Average per-class scores: `macro` over classes that occur (in target or predictions;
    in the target only when `top_k > 1`; every label for multilabel), `weighted` by support."""
    if average is None or average == "none":
        return score
    if average == "weighted":
        weights = (tp + fn).to(score.dtype)
    elif multilabel:
        weights = torch.ones_like(score)
    else:
        weights = seen_classes(tp + fp, tp + fn, labels_only=top_k > 1).to(score.dtype)
    return weighted_class_mean(score, weights)


def stat_rows(confmat: Tensor, task: str) -> Tensor:
    """`(..., 4, W)` int64 rows `[tp, fp, tn, fn]` of a confusion matrix (or a stack of them,
    one per sample), `W` = 1 for binary, else the classes or labels: what a samplewise state
    keeps per sample."""
    stats = torch.stack(stat_scores_from_confmat(confmat, task), dim=-1 if task == "binary" else -2)
    return stats.unsqueeze(-1) if task == "binary" else stats


def stat_counts(rows: Tensor, task: str) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """`(tp, fp, tn, fn)` of `stat_rows`' layout (0-d per sample for binary)."""
    tp, fp, tn, fn = rows.unbind(-2)
    if task == "binary":
        return tp.squeeze(-1), fp.squeeze(-1), tn.squeeze(-1), fn.squeeze(-1)
    return tp, fp, tn, fn


def micro_stat_rows(
    preds: Tensor, target: Tensor, ignore_index: int | None = None, samplewise: bool = False
) -> tuple[Tensor, Tensor]:
    """Multiclass `stat_rows` of width 1 without a class count (`num_classes=None`, micro
    averages only): tp = correct positions, fp = fn = wrong ones, tn = 0 (no statistic these
    averages allow reads it); plus the count of negative targets and predictions (an upper
    bound cannot be checked without the class count).

    Example:
        >>> micro_stat_rows(torch.tensor([0, 2, 1]), torch.tensor([0, 1, 1]))[0].view(-1)
        tensor([2, 1, 0, 1])
    """
    if preds.dim() == target.dim() + 1:
        predicted = preds.argmax(1)
        valid_pred = torch.ones_like(predicted, dtype=torch.bool)
    else:
        predicted = preds.long()
        valid_pred = predicted >= 0
    target_l = target.long()
    counted = target_l >= 0
    invalid = (~counted).sum()
    if ignore_index is not None:
        kept = target_l != ignore_index
        invalid = (~counted & kept).sum()
        counted = counted & kept
    counted = counted & valid_pred
    correct = counted & (predicted == target_l)
    dims = tuple(range(1, target.dim())) if samplewise else tuple(range(target.dim()))
    right = correct.sum(dims) if dims else correct.long()
    total = counted.sum(dims) if dims else counted.long()
    wrong = total - right
    stats = torch.stack([right, wrong, torch.zeros_like(right), wrong], dim=-1)
    return stats.unsqueeze(-1), invalid + (~valid_pred).sum()


def reduce_stat_scores(
    kind: str,
    confmat: Tensor,
    task: str,
    average: str | None,
    *,
    top_k: int = 1,
    beta: float = 1.0,
    zero_division: float = 0.0,
) -> Tensor:
    """One of accuracy, precision, recall, fbeta, specificity, npv, hamming from a confusion matrix,
    averaged as TorchMetrics does for `task` (`average="binary"` is implied for binary); a
    stack of matrices (one per sample) gives one value per sample."""
    tp, fp, tn, fn = stat_scores_from_confmat(confmat, task)
    return reduce_stat_counts(
        kind,
        (tp, fp, tn, fn),
        task,
        average,
        top_k=top_k,
        beta=beta,
        zero_division=zero_division,
    )


def reduce_stat_counts(
    kind: str,
    counts: tuple[Tensor, Tensor, Tensor, Tensor],
    task: str,
    average: str | None,
    *,
    top_k: int = 1,
    beta: float = 1.0,
    zero_division: float = 0.0,
) -> Tensor:
    """`reduce_stat_scores` from `(tp, fp, tn, fn)` (as `stat_scores_from_confmat` gives)."""
    tp, fp, tn, fn = counts
    multilabel = task == "multilabel"
    if task == "binary":
        average = "binary"
    if average == "micro":
        tp, fp, tn, fn = tp.sum(-1), fp.sum(-1), tn.sum(-1), fn.sum(-1)
    if kind in ("accuracy", "hamming"):
        exact = multilabel or average == "binary"
        score = safe_divide(tp + tn, tp + tn + fp + fn) if exact else recall_ratio(tp, tp + fn)
        if kind == "hamming":
            score = 1 - score
    elif kind == "precision":
        score = precision_ratio(tp, tp + fp, zero_division)
    elif kind == "recall":
        score = recall_ratio(tp, tp + fn, zero_division)
    elif kind == "fbeta":
        score = fbeta_ratio(tp, tp + fp, tp + fn, beta * beta, zero_division)
    elif kind == "specificity":  # the recall of the negatives
        score = recall_ratio(tn, tn + fp)
    elif kind == "npv":  # negative predictive value: the precision of the negatives
        score = precision_ratio(tn, tn + fn, zero_division)
    else:
        raise ValueError(f"Unknown statistic {kind!r}")
    if average in ("binary", "micro"):
        return score
    # TorchMetrics passes top_k to the macro weighting for accuracy, precision, recall and NPV.
    weight_top_k = top_k if kind in ("accuracy", "precision", "recall", "npv") else 1
    return weighted_average(
        score, average, multilabel=multilabel, tp=tp, fp=fp, fn=fn, top_k=weight_top_k
    )


def stat_scores_table(
    confmat: Tensor, task: str, average: str | None, *, batch_weights: bool = False
) -> Tensor:
    """TorchMetrics' `[tp, fp, tn, fn, support]` table, averaged over classes as asked (per
    sample for a stack of matrices). `batch_weights`: the `weighted` supports are divided by
    their total over the whole stack, not per sample (TorchMetrics' multilabel samplewise)."""
    return stat_scores_table_from_counts(
        stat_scores_from_confmat(confmat, task), task, average, batch_weights=batch_weights
    )


def stat_scores_table_from_counts(
    counts: tuple[Tensor, Tensor, Tensor, Tensor],
    task: str,
    average: str | None,
    *,
    batch_weights: bool = False,
) -> Tensor:
    """`stat_scores_table` from `(tp, fp, tn, fn)`."""
    tp, fp, tn, fn = counts
    table = torch.stack([tp, fp, tn, fn, tp + fn], dim=-1)
    if task == "binary" or average is None or average == "none":
        return table
    if average == "micro":
        return table.sum(-2)
    if average == "macro":
        return table.float().mean(-2)
    weight = tp + fn
    total = weight.sum() if batch_weights else weight.sum(-1, keepdim=True)
    return (table * (weight / total).unsqueeze(-1)).sum(-2)


def confmat_normalize(confmat: Tensor, normalize: str | None) -> Tensor:
    """Normalize over targets (`true`), predictions (`pred`) or everything (`all`); 0/0 is 0
    (native `confusion_matrix_compute`; a copy without normalization: never the state
    itself, which changes on update)."""
    return confusion_matrix_compute(confmat, None if normalize == "none" else normalize)


def jaccard_from_confmat(
    confmat: Tensor,
    task: str,
    average: str | None,
    ignore_index: int | None = None,
    zero_division: float = 0.0,
) -> Tensor:
    """Intersection over union per class (or label), averaged as TorchMetrics' JaccardIndex."""
    confmat = confmat.float()
    if task == "binary":
        tp, fp, _, fn = stat_scores_from_confmat(confmat, task)
        return safe_divide(tp, tp + fp + fn, zero_division)
    multilabel = task == "multilabel"
    ignore_in = not multilabel and ignore_index is not None and 0 <= ignore_index < confmat.shape[0]
    tp, fp, _, fn = stat_scores_from_confmat(confmat, task)
    predicted, actual = tp + fp, tp + fn
    union = predicted + fn  # tp + fp + fn
    if average == "micro":
        tp = tp.sum()
        union = union.sum() - (union[ignore_index] if ignore_in else 0.0)
    score = safe_divide(tp, union, zero_division)
    if average is None or average in ("none", "micro"):
        return score
    if average == "weighted":
        weights = actual
    else:
        weights = torch.ones_like(score)
        if ignore_in:
            weights[ignore_index] = 0.0
        if not multilabel:
            weights = torch.where(seen_classes(predicted, actual), weights, 0.0)
    # TorchMetrics' Jaccard index of no class is NaN (0 / 0), not its other averages' 0
    return weighted_class_mean(score, weights, empty=float("nan"))


def matthews_from_confmat(confmat: Tensor) -> Tensor:
    """Matthews correlation from a `(C, C)` (or `(L, 2, 2)`, summed) confusion matrix, with
    TorchMetrics 1.9's special cases for degenerate binary matrices, chosen by `torch.where`."""
    if confmat.dim() == 3:
        confmat = confmat.sum(0)
    counts = confmat.float()
    tk, pk = counts.sum(-1), counts.sum(-2)
    c, s = counts.trace(), counts.sum()
    numerator = c * s - (tk * pk).sum()
    denom = (s * s - (pk * pk).sum()) * (s * s - (tk * tk).sum())
    general = torch.where(denom == 0, 0.0, numerator / denom.sqrt())
    if confmat.numel() != 4:
        return general
    tn, fp, fn, tp = counts.reshape(-1)
    eps = torch.finfo(torch.float32).eps
    root_eps = eps**0.5
    # TorchMetrics' chain for a zero denominator, first match wins.
    cases = [
        ((fn == 0) & (tn == 0), root_eps * (tp - fp)),
        ((fp == 0) & (tn == 0), root_eps * (tp - fn)),
        ((tp == 0) & (fn == 0), root_eps * (tn - fp)),
        ((tp == 0) & (fp == 0), root_eps * (tn - fn)),
        (tp == 0, tn - fp * fn),
        (tn == 0, tp - fp * fn),
        ((fp == 0) | (fn == 0), tp * tn),
    ]
    eps_denom = (tp + fp + eps) * (tp + fn + eps) * (tn + fp + eps) * (tn + fn + eps)
    degenerate = torch.zeros_like(general)
    for condition, value in reversed(cases):
        degenerate = torch.where(condition, value / eps_denom.sqrt(), degenerate)
    value = torch.where(denom == 0, degenerate, general)
    value = torch.where((tp + tn == 0) & (fp + fn != 0), -1.0, value)
    return torch.where((tp + tn != 0) & (fp + fn == 0), 1.0, value)


def cohen_kappa_from_confmat(confmat: Tensor, weights: str | None = None) -> Tensor:
    """Cohen's kappa from a `(C, C)` confusion matrix, unweighted, `linear` or `quadratic`."""
    counts = confmat.float()
    n = counts.shape[0]
    expected = counts.sum(1, keepdim=True) @ counts.sum(0, keepdim=True) / counts.sum()
    grid = torch.arange(n, dtype=counts.dtype, device=counts.device).expand(n, n)
    if weights is None or weights == "none":
        w = 1.0 - torch.eye(n, dtype=counts.dtype, device=counts.device)
    elif weights == "linear":
        w = (grid - grid.T).abs()
    else:
        w = (grid - grid.T) ** 2
    return 1 - (w * counts).sum() / (w * expected).sum()
