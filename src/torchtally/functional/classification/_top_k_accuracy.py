"""Top-k accuracy: a sample is right when its label is among its k highest scores.

Ties are broken as scikit-learn's `top_k_accuracy_score` breaks them (a stable sort, reversed):
among equal scores the higher class index ranks first. So the label's rank is the number of
classes scoring strictly higher, plus the number of higher-indexed classes scoring the same,
and the sample is a hit when that rank is below k. Computing the rank this way needs no sort
and no data-dependent shape: two comparisons and a sum over the class dimension.
"""

from __future__ import annotations

import torch
from torch import Tensor

from torchtally._errors import check_int
from torchtally.functional._blocks import blocked
from torchtally.functional._checks import (
    check_same_shape,
    check_tensor,
    count_negative,
    count_nonfinite,
    count_outside,
)
from torchtally.functional.classification._inputs import check_index_labels

__all__ = [
    "top_k_accuracy",
    "top_k_accuracy_compute",
    "top_k_accuracy_counts",
    "top_k_accuracy_errors",
    "top_k_accuracy_update",
]


def _check_inputs(labels: Tensor, predictions: Tensor) -> None:
    check_index_labels(labels)
    check_tensor("predictions", predictions)
    if not predictions.is_floating_point() or predictions.shape[:-1] != labels.shape:
        raise ValueError(
            "Argument `predictions` must hold floating-point class scores of shape "
            "labels.shape + (num_classes,). Received: "
            f"labels.shape={tuple(labels.shape)}, predictions.shape={tuple(predictions.shape)}, "
            f"predictions.dtype={predictions.dtype}"
        )


def top_k_accuracy_update(
    labels: Tensor, predictions: Tensor, k: int, weights: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    """(Weighted) hit count and total weight of one batch, both 0-d float64.

    Labels outside `[0, num_classes)` count in neither; `top_k_accuracy_errors` counts them.

    Args:
        labels: Integer class indices of any shape.
        predictions: Scores or logits of shape `labels.shape + (num_classes,)`.
        k: How many of the highest scores count as a hit (>= 1).
        weights: Optional sample weights shaped like `labels`.

    Returns:
        `(hits, total)`.

    Example:
        >>> top_k_accuracy_update(torch.tensor([2, 0]), torch.tensor([[0.5, 0.2, 0.3]] * 2), 2)
        (tensor(2., dtype=torch.float64), tensor(2., dtype=torch.float64))
    """
    check_int("k", k, 1)
    _check_inputs(labels, predictions)
    hit, valid = _hits(labels, predictions, k)
    if weights is None:
        weight = valid.to(torch.float64)
    else:
        check_tensor("weights", weights)
        check_same_shape("labels", labels, "weights", weights)
        weight = torch.where(valid, weights.to(torch.float64), 0.0)
    return torch.where(hit, weight, 0.0).sum(), weight.sum()


def top_k_accuracy_counts(
    labels: Tensor, predictions: Tensor, k: int, check_values: bool
) -> tuple[Tensor, Tensor, tuple[Tensor | None, ...] | None]:
    """Unweighted `top_k_accuracy_update` in fewer ops: the int64 counts of hits and of valid
    labels, and (with `check_values`) `top_k_accuracy_errors` with the count of labels outside
    `[0, num_classes)` read off the same comparison that makes the valid mask."""
    check_int("k", k, 1)
    _check_inputs(labels, predictions)
    hit, valid = _hits(labels, predictions, k)
    total = torch.count_nonzero(valid)
    hits = torch.count_nonzero(hit.logical_and_(valid))
    if not check_values:
        return hits, total, None
    outside = torch.rsub(total, labels.numel())
    return hits, total, (outside, count_nonfinite(predictions), None, None)


def _hits(labels: Tensor, predictions: Tensor, k: int) -> tuple[Tensor, Tensor]:
    """Whether each label ranks in the top k, and whether it names a class at all."""
    num_classes = predictions.shape[-1]
    as_long = labels if labels.dtype == torch.int64 else labels.long()  # skip a no-op dispatch
    clamped = as_long.clamp(0, num_classes - 1).unsqueeze(-1)
    columns = torch.arange(num_classes, device=labels.device)
    rows = blocked(predictions, num_classes)
    if rows is None:
        hit = _ranks(predictions, clamped, columns) < k
    else:
        # Eager CPU, a large batch: block by block, so that the (rows, num_classes) masks
        # stay cache-sized buffers instead of fresh batch-sized allocations.
        flat, flat_clamped = predictions.reshape(-1, num_classes), clamped.reshape(-1, 1)
        ranks = torch.empty(flat.shape[0], dtype=torch.int32, device=flat.device)
        for start in range(0, flat.shape[0], rows):
            stop = start + rows
            _ranks(flat[start:stop], flat_clamped[start:stop], columns, out=ranks[start:stop])
        hit = ranks.reshape(labels.shape) < k
    return hit, clamped.squeeze(-1) == as_long


def _ranks(
    predictions: Tensor, clamped: Tensor, columns: Tensor, out: Tensor | None = None
) -> Tensor:
    """Per sample, how many classes rank ahead of its label: a higher score, or the same
    score and a higher index (int32)."""
    label_score = predictions.gather(-1, clamped)
    ahead = torch.gt(predictions, label_score).logical_or_(
        torch.eq(predictions, label_score).logical_and_(columns > clamped)
    )
    # int32: a sum of bools in int64 first copies the whole mask to int64 (8 bytes a score)
    if out is None:
        return ahead.sum(-1, dtype=torch.int32)
    return torch.sum(ahead, -1, dtype=torch.int32, out=out)


def top_k_accuracy_errors(
    labels: Tensor, predictions: Tensor, weights: Tensor | None = None
) -> tuple[Tensor | None, ...]:
    """Counts of labels outside `[0, num_classes)`, non-finite scores, negative weights and
    NaN or infinite weights."""
    return (
        count_outside(labels, 0, predictions.shape[-1]),
        count_nonfinite(predictions),
        count_negative(weights),
        None if weights is None else count_nonfinite(weights),
    )


def top_k_accuracy_compute(hits: Tensor, total: Tensor) -> Tensor:
    """Hits over total weight; NaN when nothing was counted."""
    return hits.double() / total.double()


def top_k_accuracy(
    labels: Tensor, predictions: Tensor, k: int = 1, weights: Tensor | None = None
) -> Tensor:
    """Fraction of samples whose label is among their `k` highest scores.

    Args:
        labels: Integer class indices of any shape.
        predictions: Scores or logits of shape `labels.shape + (num_classes,)`.
        k: How many of the highest scores count (ties as scikit-learn: higher index first).
        weights: Optional sample weights shaped like `labels`: the weighted mean of the hits,
            as scikit-learn's `sample_weight` (with 0/1 weights, the plain mean over weight 1).

    Returns:
        A 0-d float64 tensor.

    Example:
        >>> top_k_accuracy(torch.tensor([2, 0]), torch.tensor([[0.5, 0.2, 0.3]] * 2), k=1)
        tensor(0.5000, dtype=torch.float64)
    """
    return top_k_accuracy_compute(*top_k_accuracy_update(labels, predictions, k, weights))
