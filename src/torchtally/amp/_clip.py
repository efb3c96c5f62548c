"""Gradient clipping by global norm and by value, with tensor ops only (no host reads)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import cast

import torch
from torch import Tensor

__all__ = ["clip_grad_norm", "clip_grad_value", "grads_of"]

# The same guard against division by zero as torch.nn.utils.clip_grad_norm_.
_EPS = 1e-6


def grads_of(params: Iterable[Tensor]) -> list[Tensor]:
    """The existing gradients of `params` (parameters without one are skipped).

    Args:
        params: Parameters.

    Returns:
        Their `.grad` tensors.

    Example:
        >>> grads_of(torch.nn.Linear(2, 1).parameters())
        []
    """
    return [p.grad for p in params if p.grad is not None]


def clip_grad_norm(grads: list[Tensor], max_norm: float) -> Tensor:
    """Scale `grads` in place so that their global L2 norm is at most `max_norm`.

    Args:
        grads: Gradient tensors.
        max_norm: The largest allowed global norm.

    Returns:
        The global norm before clipping (a 0-d float32 tensor).

    Example:
        >>> g = [torch.tensor([3.0, 4.0])]
        >>> clip_grad_norm(g, 1.0)
        tensor(5.)
        >>> g[0]
        tensor([0.6000, 0.8000])
    """
    if not grads:
        return torch.zeros(())
    device = grads[0].device
    norms = [torch.linalg.vector_norm(g.detach(), 2.0, dtype=torch.float32) for g in grads]
    total = torch.linalg.vector_norm(torch.stack([n.to(device) for n in norms]), 2.0)
    # min(1, max_norm / norm) without a branch: a norm under the limit leaves grads as they are
    coef = torch.clamp(max_norm / (total + _EPS), max=1.0)
    for g in grads:
        g.detach().mul_(coef.to(g.device, g.dtype))
    return cast(Tensor, total)


def clip_grad_value(grads: list[Tensor], max_value: float) -> None:
    """Clamp every gradient element into `[-max_value, max_value]`, in place.

    Args:
        grads: Gradient tensors.
        max_value: The largest allowed magnitude.

    Example:
        >>> g = [torch.tensor([-3.0, 0.5])]
        >>> clip_grad_value(g, 1.0)
        >>> g[0]
        tensor([-1.0000,  0.5000])
    """
    for g in grads:
        g.detach().clamp_(-max_value, max_value)
