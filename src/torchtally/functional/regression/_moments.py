"""Merging the co-moments of parts of a sample (means, sums of squared deviations and of
cross deviations, counts) into those of the whole, as partial Pearson statistics merge across
processes."""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["merge_comoments"]


def merge_comoments(
    mean_x: Tensor,
    mean_y: Tensor,
    m2_x: Tensor,
    m2_y: Tensor,
    c_xy: Tensor,
    count: Tensor,
) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor]:
    """The whole sample's `(mean_x, mean_y, m2_x, m2_y, c_xy, count)` from its parts, stacked
    along dim 0 (`m2` a sum of squared deviations from the part's mean, `c_xy` a sum of
    products of deviations).

    The closed form of the pairwise (Chan et al.) update: with N = Σ n_i and the pooled
    mean, M2 = Σ M2_i + Σ n_i (mean_i - mean)², and C likewise. A part with no rows adds
    nothing; with no rows at all the means are 0. The inputs are never written.
    """
    n = count.to(torch.result_type(mean_x, 1.0))
    total = n.sum(0)
    safe = torch.where(total == 0, 1.0, total)
    pooled_x = (n * mean_x).sum(0) / safe
    pooled_y = (n * mean_y).sum(0) / safe
    dx, dy = mean_x - pooled_x, mean_y - pooled_y
    merged_x = m2_x.sum(0) + (n * dx * dx).sum(0)
    merged_y = m2_y.sum(0) + (n * dy * dy).sum(0)
    merged_xy = c_xy.sum(0) + (n * dx * dy).sum(0)
    return pooled_x, pooled_y, merged_x, merged_y, merged_xy, total
