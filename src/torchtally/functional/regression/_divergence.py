"""Kullback-Leibler and Jensen-Shannon divergences between the rows of two `(N, D)` tensors of
distributions (probabilities, normalized per row, or log-probabilities)."""

from __future__ import annotations

import math

import torch
from torch import Tensor

__all__ = ["js_divergence_rows", "kl_divergence_rows"]


def _normalized(p: Tensor) -> Tensor:
    return p / p.sum(-1, keepdim=True)


def _kl_log(log_p: Tensor, log_q: Tensor) -> Tensor:
    p = log_p.exp()
    # a zero probability (log -inf) adds nothing, as in the probability form (0 · -inf is NaN)
    return torch.where(p == 0, 0.0, p * (log_p - log_q)).sum(-1)


def _kl_prob(p: Tensor, q: Tensor) -> Tensor:
    # 0 · log(0 / q) = 0 (xlogy), so a zero probability adds nothing instead of NaN
    return torch.xlogy(p, p / q).sum(-1)


def kl_divergence_rows(p: Tensor, q: Tensor, log_prob: bool = False) -> Tensor:
    """KL(p || q) of each row, float64 `(N,)`; probabilities are normalized per row first,
    `log_prob=True` takes log-probabilities as they are.

    Example:
        >>> kl_divergence_rows(torch.tensor([[0.5, 0.5]]), torch.tensor([[0.25, 0.75]]))
        tensor([0.1438], dtype=torch.float64)
    """
    p64, q64 = p.to(torch.float64), q.to(torch.float64)
    if log_prob:
        return _kl_log(p64, q64)
    return _kl_prob(_normalized(p64), _normalized(q64))


def js_divergence_rows(p: Tensor, q: Tensor, log_prob: bool = False) -> Tensor:
    """Jensen-Shannon divergence of each row, `KL(p || m) / 2 + KL(q || m) / 2` with
    `m = (p + q) / 2` (natural log), float64 `(N,)`.

    Example:
        >>> js_divergence_rows(torch.tensor([[1.0, 0.0]]), torch.tensor([[0.0, 1.0]]))
        tensor([0.6931], dtype=torch.float64)
    """
    p64, q64 = p.to(torch.float64), q.to(torch.float64)
    if log_prob:
        log_m = torch.logaddexp(p64, q64) - math.log(2.0)
        return 0.5 * _kl_log(p64, log_m) + 0.5 * _kl_log(q64, log_m)
    p64, q64 = _normalized(p64), _normalized(q64)
    m = (p64 + q64) / 2
    return 0.5 * _kl_prob(p64, m) + 0.5 * _kl_prob(q64, m)
