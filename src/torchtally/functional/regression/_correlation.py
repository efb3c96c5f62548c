"""Correlations between predictions and labels: Pearson's and Lin's concordance from float64
moment sums, Spearman's from average ranks (over a whole sample, with a validity mask for a
preallocated buffer's unfilled rows), and the cosine similarity of rows."""

from __future__ import annotations

import torch
from torch import Tensor

from torchtally.functional._checks import check_same_shape

__all__ = [
    "average_ranks",
    "comoment_sums",
    "concordance_from_sums",
    "cosine_similarity_rows",
    "pearson_from_sums",
    "spearman_from_ranks",
]


def comoment_sums(x: Tensor, y: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """Per column Σx, Σy, Σx², Σy² and Σxy of `(N,)` or `(N, k)` samples (float64 `(k,)`);
    the count is the number of rows."""
    check_same_shape("x", x, "y", y)
    rows = x.shape[0] if x.dim() else 1
    x64, y64 = x.double().reshape(rows, -1), y.double().reshape(rows, -1)
    return x64.sum(0), y64.sum(0), (x64 * x64).sum(0), (y64 * y64).sum(0), (x64 * y64).sum(0)


def pearson_from_sums(
    sum_x: Tensor, sum_y: Tensor, sum_x2: Tensor, sum_y2: Tensor, sum_xy: Tensor, count: Tensor
) -> Tensor:
    """Pearson's correlation per column from `comoment_sums`, clamped to [-1, 1] (NaN for a
    constant column)."""
    cov = sum_xy - sum_x * sum_y / count
    var_x = sum_x2 - sum_x * sum_x / count
    var_y = sum_y2 - sum_y * sum_y / count
    return (cov / (var_x * var_y).sqrt()).clamp(-1.0, 1.0)


def concordance_from_sums(
    sum_x: Tensor, sum_y: Tensor, sum_x2: Tensor, sum_y2: Tensor, sum_xy: Tensor, count: Tensor
) -> Tensor:
    """Lin's concordance correlation per column, 2 cov / (var_x + var_y + (mean_x -
    mean_y)²), with unbiased (n - 1) variances and covariance (TorchMetrics')."""
    mean_x, mean_y = sum_x / count, sum_y / count
    cov = (sum_xy - sum_x * sum_y / count) / (count - 1)
    var_x = (sum_x2 - sum_x * sum_x / count) / (count - 1)
    var_y = (sum_y2 - sum_y * sum_y / count) / (count - 1)
    return 2 * cov / (var_x + var_y + (mean_x - mean_y) ** 2)


def average_ranks(values: Tensor, valid: Tensor | None = None) -> Tensor:
    """1-based ranks per column of `(M, K)` values, ties sharing their mean rank (float64);
    rows with `valid` False sort last and rank among themselves (fixed shapes, no host
    sync)."""
    rows = values.shape[0]
    keyed = (
        values.double()
        if valid is None
        else values.double().where(valid.unsqueeze(1), float("inf"))
    )
    ordered, order = torch.sort(keyed, dim=0, stable=True)
    position = torch.arange(1, rows + 1, dtype=torch.float64, device=values.device)
    position = position.unsqueeze(1).expand_as(ordered)
    new_group = torch.ones_like(ordered, dtype=torch.bool)
    new_group[1:] = ordered[1:] != ordered[:-1]
    group = torch.cumsum(new_group.long(), 0) - 1
    rank_sum = torch.zeros_like(ordered).scatter_add_(0, group, position)
    size = torch.zeros_like(ordered).scatter_add_(0, group, torch.ones_like(ordered))
    mean_rank = (rank_sum / size.clamp(min=1.0)).gather(0, group)
    return torch.empty_like(mean_rank).scatter_(0, order, mean_rank)


def spearman_from_ranks(
    ranks_x: Tensor, ranks_y: Tensor, valid: Tensor | None = None, eps: float = 0.0
) -> Tensor:
    """Pearson's correlation of two `(M, K)` rank columns over the `valid` rows (population
    moments), `cov / (std_x std_y + eps)` clamped to [-1, 1]; TorchMetrics' Spearman adds
    `eps=1e-6`."""
    if valid is None:
        weight = torch.ones_like(ranks_x[:, :1])
    else:
        weight = valid.to(torch.float64).unsqueeze(1)
    count = weight.sum(0)
    diff_x = (ranks_x - (ranks_x * weight).sum(0) / count) * weight
    diff_y = (ranks_y - (ranks_y * weight).sum(0) / count) * weight
    cov = (diff_x * diff_y).sum(0) / count
    std_x = (diff_x.square().sum(0) / count).sqrt()
    std_y = (diff_y.square().sum(0) / count).sqrt()
    return (cov / (std_x * std_y + eps)).clamp(-1.0, 1.0)


def cosine_similarity_rows(labels: Tensor, predictions: Tensor) -> Tensor:
    """The cosine similarity of each row of `(N, D)` inputs (float64 `(N,)`)."""
    check_same_shape("labels", labels, "predictions", predictions)
    p, t = predictions.double(), labels.double()
    norms = torch.linalg.vector_norm(p, dim=-1) * torch.linalg.vector_norm(t, dim=-1)
    similarity: Tensor = (p * t).sum(-1) / norms
    return similarity
