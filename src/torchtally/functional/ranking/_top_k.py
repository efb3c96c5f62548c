"""Precision@k and recall@k with sparse labels (cstorch's and TensorFlow's definitions).

Each sample has a set of relevant class ids (`labels`, `(N, num_labels)`) and a score per
class (`predictions`, `(N, num_classes)`). Its top k classes are the k highest scores, ties
going to the lower class id (as TF's `top_k`). With `hits` = relevant classes in the top k:

    precision@k = sum_i w_i * hits_i / sum_i w_i * k
    recall@k    = sum_i w_i * hits_i / sum_i w_i * |labels_i|

A label repeated within a row counts once for precision@k (each top-k slot is relevant or not:
cstorch counts the repeat twice, which can push its precision past 1) and once per occurrence
for recall@k, as cstorch does (the row's labels are a multiset). A label outside
`[0, num_classes)` is never a hit and still counts in recall's denominator, as in TF; the
metrics also report such labels as invalid.

Rank is computed per label (how many classes outscore it), not with `topk`, so the result is
exact and deterministic with tied scores; the cost is O(N * num_labels * num_classes).
"""

from __future__ import annotations

import torch
from torch import Tensor

from torchtally._errors import check_int
from torchtally.functional._checks import check_tensor

__all__ = [
    "at_k_update",
    "check_top_k_inputs",
    "precision_at_k",
    "precision_at_k_compute",
    "recall_at_k",
    "recall_at_k_compute",
    "row_weights",
    "top_k_hits",
]


def check_top_k_inputs(labels: Tensor, predictions: Tensor, k: int) -> Tensor:
    """Validate shapes and dtypes; return `labels` as `(N, num_labels)`."""
    check_tensor("labels", labels)
    check_tensor("predictions", predictions)
    check_int("k", k, 1)
    if predictions.dim() != 2 or not predictions.is_floating_point():
        raise ValueError(
            "Argument `predictions` must be a floating-point tensor of shape "
            f"(N, num_classes). Received: predictions.shape={tuple(predictions.shape)}, "
            f"predictions.dtype={predictions.dtype}"
        )
    if k > predictions.shape[1]:
        raise ValueError(
            "Argument `k` must be at most num_classes (predictions.shape[1]). "
            f"Received: k={k}, predictions.shape={tuple(predictions.shape)}"
        )
    if labels.dim() not in (1, 2) or labels.shape[0] != predictions.shape[0]:
        raise ValueError(
            "Argument `labels` must have shape (N,) or (N, num_labels) with N = "
            f"predictions.shape[0]. Received: labels.shape={tuple(labels.shape)}, "
            f"predictions.shape={tuple(predictions.shape)}"
        )
    if labels.is_floating_point() or labels.dtype == torch.bool:
        raise TypeError(
            f"Argument `labels` must hold integer class ids. Received: labels.dtype={labels.dtype}"
        )
    return labels if labels.dim() == 2 else labels[:, None]


def top_k_hits(
    labels: Tensor, predictions: Tensor, k: int, *, repeats: bool = False
) -> tuple[Tensor, Tensor]:
    """Per sample: labels ranked in the top k, and labels.

    Args:
        labels: `(N,)` or `(N, num_labels)` integer class ids.
        predictions: `(N, num_classes)` scores.
        k: Size of the top.
        repeats: Count a label repeated in a row at each occurrence (cstorch's recall@k)
            instead of once.

    Returns:
        `(hits, count)`, two `(N,)` int64 tensors.
    """
    labels = check_top_k_inputs(labels, predictions, k)
    num_classes = predictions.shape[1]
    in_range = torch.logical_and(labels >= 0, labels < num_classes)
    safe = labels.clamp(0, num_classes - 1)
    label_scores = predictions.gather(1, safe)
    columns = torch.arange(num_classes, device=predictions.device)
    ranked = []
    for j in range(labels.shape[1]):  # one (N, num_classes) comparison per label column
        score = label_scores[:, j : j + 1]
        above = torch.count_nonzero(predictions > score, dim=1)
        tied_first = torch.count_nonzero(
            torch.logical_and(predictions == score, columns < safe[:, j : j + 1]), dim=1
        )
        ranked.append(above + tied_first < k)
    in_top = torch.stack(ranked, dim=1) & in_range
    if repeats:
        return torch.count_nonzero(in_top, dim=1), labels.new_full(
            (labels.shape[0],), labels.shape[1]
        )
    # A label is counted at its first occurrence in the row only (labels are a set).
    width = labels.shape[1]
    earlier = torch.ones(width, width, dtype=torch.bool, device=labels.device).tril(-1)
    repeated = torch.logical_and(labels[:, :, None] == labels[:, None, :], earlier).any(-1)
    first = repeated.logical_not()
    hits = torch.count_nonzero(in_top & first, dim=1)
    return hits, torch.count_nonzero(first, dim=1)


def row_weights(weights: Tensor | None, rows: int) -> Tensor | None:
    """Per-sample weights as float64 `(N,)` or 0-d; None stays None."""
    if weights is None:
        return None
    check_tensor("weights", weights)
    if weights.dim() != 0 and weights.numel() != rows:
        raise ValueError(
            f"Argument `weights` must be a scalar or hold one weight per sample ({rows}). "
            f"Received: weights.shape={tuple(weights.shape)}"
        )
    return weights.to(torch.float64).reshape(-1 if weights.dim() else ())


def at_k_update(
    labels: Tensor, predictions: Tensor, k: int, weights: Tensor | None = None
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """One batch's statistics shared by precision@k and recall@k (0-d float64 each).

    Args:
        labels: `(N,)` or `(N, num_labels)` relevant class ids.
        predictions: `(N, num_classes)` scores.
        k: Size of the top.
        weights: Optional scalar or `(N,)` per-sample weights.

    Returns:
        `(hits, weight, label_hits, relevant)`: sums over samples of `w * distinct hits`,
        `w`, `w * label occurrences in the top k` and `w * labels`.
    """
    hits, _ = top_k_hits(labels, predictions, k)
    label_hits, relevant = top_k_hits(labels, predictions, k, repeats=True)
    w = row_weights(weights, hits.shape[0])
    rows = [t.to(torch.float64) for t in (hits, label_hits, relevant)]
    if w is None:
        weight = rows[0].new_full((), hits.shape[0])
    else:
        rows = [t * w for t in rows]
        weight = w.expand(hits.shape).sum()
    found, label_found, relevant_sum = (t.sum() for t in rows)
    return found, weight, label_found, relevant_sum


def precision_at_k_compute(hits: Tensor, weight: Tensor, k: int) -> Tensor:
    """Weighted hits over `k` times the weight (TP / (TP + FP)); NaN when nothing counted."""
    return hits.double() / (k * weight.double())


def precision_at_k(
    labels: Tensor, predictions: Tensor, k: int, weights: Tensor | None = None
) -> Tensor:
    """Precision@k: the weighted fraction of top-k classes that are relevant.

    Args:
        labels: `(N,)` or `(N, num_labels)` relevant class ids.
        predictions: `(N, num_classes)` scores (logits or probabilities).
        k: Size of the top (1 <= k <= num_classes).
        weights: Optional scalar or `(N,)` per-sample weights.

    Returns:
        A 0-d float64 tensor.

    Example:
        >>> # top-2: {1, 2} holds label 1 of {1, 3}; {0, 3} misses label 2 (a set: {2, 2})
        >>> scores = torch.tensor([[0.1, 0.5, 0.3, 0.2], [0.4, 0.1, 0.2, 0.3]])
        >>> precision_at_k(torch.tensor([[1, 3], [2, 2]]), scores, k=2)  # 1 hit / (2 * 2)
        tensor(0.2500, dtype=torch.float64)
    """
    hits, weight, _, _ = at_k_update(labels, predictions, k, weights)
    return precision_at_k_compute(hits, weight, k)


def recall_at_k_compute(hits: Tensor, relevant: Tensor) -> Tensor:
    """Weighted hits over weighted relevant labels (TP / (TP + FN)); NaN when none."""
    return hits.double() / relevant.double()


def recall_at_k(
    labels: Tensor, predictions: Tensor, k: int, weights: Tensor | None = None
) -> Tensor:
    """Recall@k: the weighted fraction of relevant classes found in the top k.

    Args:
        labels: `(N,)` or `(N, num_labels)` relevant class ids.
        predictions: `(N, num_classes)` scores (logits or probabilities).
        k: Size of the top (1 <= k <= num_classes).
        weights: Optional scalar or `(N,)` per-sample weights.

    Returns:
        A 0-d float64 tensor.

    Example:
        >>> scores = torch.tensor([[0.1, 0.5, 0.3, 0.2], [0.4, 0.1, 0.2, 0.3]])
        >>> recall_at_k(torch.tensor([[1, 3], [2, 2]]), scores, k=2)  # 1 hit / (2 + 2) labels
        tensor(0.2500, dtype=torch.float64)
    """
    _, _, label_hits, relevant = at_k_update(labels, predictions, k, weights)
    return recall_at_k_compute(label_hits, relevant)
