"""Scalar formulas shared by the adaptive optimizers, written as tensor operations."""

from __future__ import annotations

import math

import torch
from torch import Tensor

__all__ = ["one_minus_pow"]


def one_minus_pow(beta: float, step: Tensor) -> Tensor:
    """`1 - beta**step` for a step-count tensor (the bias corrections of Adam and its kin).

    Computed as `-expm1(step * log(beta))`: in float32, `1 - beta**step` loses about five
    digits to cancellation when `beta` is near 1 (0.999 rounds to 0.99900001), this does not.

    Args:
        beta: A decay rate in [0, 1).
        step: The step count (>= 1), any floating dtype.

    Returns:
        A tensor like `step`.

    Example:
        >>> one_minus_pow(0.5, torch.tensor(2.0))
        tensor(0.7500)
    """
    if beta == 0.0:
        return torch.ones_like(step)
    return -torch.expm1(step * math.log(beta))


def decay_weights(
    p: Tensor, grad: Tensor, lr: float | Tensor, weight_decay: float, decoupled: bool
) -> Tensor:
    """Apply weight decay and return the gradient to use.

    Decoupled decay (AdamW's) shrinks the weights in place by `1 - lr * weight_decay`; L2 decay
    adds `weight_decay * p` to the gradient. The branch is on Python values: no data-dependent
    control flow.
    """
    if weight_decay == 0:
        return grad
    if decoupled:
        p.mul_(1 - lr * weight_decay)
        return grad
    return grad + weight_decay * p


def update_moments(
    exp_avg: Tensor, exp_avg_sq: Tensor, grad: Tensor, beta1: float, beta2: float
) -> None:
    """Adam's running first and second moments, in place."""
    exp_avg.lerp_(grad, 1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
