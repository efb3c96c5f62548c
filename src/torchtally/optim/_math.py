"""Scalar formulas shared by the adaptive optimizers, written as tensor operations."""

from __future__ import annotations

import math

import torch
from torch import Tensor

__all__ = ["has_weight_decay", "one_minus_pow"]


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


def has_weight_decay(weight_decay: float | Tensor) -> bool:
    """Whether a step must apply `weight_decay`: a nonzero number, or any tensor.

    A weight-decay scheduler makes the rate a tensor that it rewrites in place; testing its
    value would read it back to the host (and recompile a traced step when it reaches 0), and
    decaying by a zero tensor changes nothing, so a tensor rate is always applied.

    Example:
        >>> has_weight_decay(0.0), has_weight_decay(torch.tensor(0.0))
        (False, True)
    """
    return isinstance(weight_decay, Tensor) or weight_decay != 0


def decay_weights(
    p: Tensor, grad: Tensor, lr: float | Tensor, weight_decay: float | Tensor, decoupled: bool
) -> Tensor:
    """Apply weight decay and return the gradient to use.

    Decoupled decay (AdamW's) shrinks the weights in place by `1 - lr * weight_decay`; L2 decay
    adds `weight_decay * p` to the gradient. The branch is on Python values: no data-dependent
    control flow.
    """
    if not has_weight_decay(weight_decay):
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
