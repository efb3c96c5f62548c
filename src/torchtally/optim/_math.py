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
