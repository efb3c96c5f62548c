"""Continuous ranked probability score of an ensemble forecast."""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["continuous_ranked_probability_score", "crps_rows"]


def crps_rows(labels: Tensor, predictions: Tensor) -> Tensor:
    """The CRPS of each row's ensemble: `predictions` `(N, m)` (m members), `labels` `(N,)`,
    float64 `(N,)`.

    CRPS = mean_i |x_i - y| - Σ_ij |x_i - x_j| / (2 m²), the energy form for the empirical
    distribution of the members. The pair sum comes from the sorted members in O(m log m):
    Σ_ij |x_i - x_j| = 2 Σ_k (2k - m - 1) x_(k) (1-based order statistics).
    """
    members = predictions.to(torch.float64)
    m = members.shape[-1]
    error = (members - labels.to(torch.float64).unsqueeze(-1)).abs().mean(-1)
    ordered = torch.sort(members, dim=-1).values
    weights = torch.arange(1 - m, m, 2, dtype=torch.float64, device=members.device)
    spread = (ordered * weights).sum(-1) / (m * m)
    return error - spread


def continuous_ranked_probability_score(labels: Tensor, predictions: Tensor) -> Tensor:
    """Mean CRPS of `(N, m)` ensemble `predictions` against `(N,)` `labels` (float64).

    Example:
        >>> continuous_ranked_probability_score(torch.tensor([0.5]), torch.tensor([[0.0, 1.0]]))
        tensor(0.2500, dtype=torch.float64)
    """
    return crps_rows(labels, predictions).mean()
