"""Hamming score of multilabel predictions: the weighted fraction of (sample, label) pairs
predicted right, `1 - Hamming distance` (TorchMetrics' `MultilabelHammingDistance` with
`average="micro"`, Burn's `HammingScore`)."""

from __future__ import annotations

import torch
from torch import Tensor

from torchtally.functional._checks import check_same_shape, check_tensor

__all__ = ["hamming_score", "hamming_update"]


def hamming_update(
    preds: Tensor, target: Tensor, threshold: float = 0.5, weights: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    """`(weighted correct pairs, weighted pairs)` of a batch, float64 0-d.

    Args:
        preds: `(N, L)` probabilities (or 0/1); a label is predicted when > `threshold`.
        target: `(N, L)` 0/1 labels.
        threshold: Decision threshold.
        weights: Optional `(N,)` per-sample weights.
    """
    check_tensor("preds", preds)
    check_tensor("target", target)
    check_same_shape("preds", preds, "target", target)
    if preds.dim() != 2:
        raise ValueError(
            f"Arguments `preds` and `target` must be (N, num_labels). Received: {tuple(preds.shape)}"
        )
    correct = ((preds > threshold) == (target > 0)).to(torch.float64)
    if weights is None:
        # new_full: a host number filled in on the device, no host-to-device copy (a sync)
        return correct.sum(), correct.new_full((), float(correct.numel()))
    check_tensor("weights", weights)
    if weights.shape != preds.shape[:1]:
        raise ValueError(
            f"Argument `weights` must hold one weight per sample ({preds.shape[0]}). "
            f"Received: weights.shape={tuple(weights.shape)}"
        )
    w = weights.to(torch.float64)[:, None]
    return (correct * w).sum(), w.sum() * preds.shape[1]


def hamming_score(preds: Tensor, target: Tensor, threshold: float = 0.5) -> Tensor:
    """Hamming score of one batch.

    Example:
        >>> hamming_score(torch.tensor([[0.9, 0.2], [0.1, 0.7]]), torch.tensor([[1, 1], [0, 1]]))
        tensor(0.7500, dtype=torch.float64)
    """
    correct, total = hamming_update(preds, target, threshold)
    return correct / total
