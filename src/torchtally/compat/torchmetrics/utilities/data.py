"""`torchmetrics.utilities.data`: the state reductions (`dim_zero_*`) TorchMetrics-style
`add_state(..., dist_reduce_fx=...)` names, and the small tensor helpers users import."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor

__all__ = [
    "dim_zero_cat",
    "dim_zero_max",
    "dim_zero_mean",
    "dim_zero_min",
    "dim_zero_sum",
    "select_topk",
    "to_categorical",
    "to_onehot",
]


def dim_zero_cat(x: Tensor | list[Tensor]) -> Tensor:
    """The rows of a list of tensors (0-d ones as one row each) as one tensor; a tensor as is.

    Raises:
        ValueError: `x` is an empty list.
    """
    if isinstance(x, Tensor):
        return x
    if not x:
        raise ValueError("No samples to concatenate: argument `x` is an empty list.")
    return torch.cat([y.reshape(1) if y.ndim == 0 else y for y in x], dim=0)


def dim_zero_sum(x: Tensor) -> Tensor:
    """The sum over the first dimension."""
    return torch.sum(x, dim=0)


def dim_zero_mean(x: Tensor) -> Tensor:
    """The mean over the first dimension."""
    return torch.mean(x, dim=0)


def dim_zero_max(x: Tensor) -> Tensor:
    """The maximum over the first dimension."""
    return torch.max(x, dim=0).values


def dim_zero_min(x: Tensor) -> Tensor:
    """The minimum over the first dimension."""
    return torch.min(x, dim=0).values


def _flatten(x: Sequence[Sequence[Any]]) -> list[Any]:
    """A list of lists as one list."""
    return [item for sublist in x for item in sublist]


def to_onehot(label_tensor: Tensor, num_classes: int | None = None) -> Tensor:
    """Labels `[N, d1, ...]` as one-hot `[N, C, d1, ...]` (C: `num_classes`, or the largest
    label + 1, which reads the labels on the host)."""
    if num_classes is None:
        num_classes = int(label_tensor.max().detach()) + 1
    onehot = torch.zeros(
        label_tensor.shape[0],
        num_classes,
        *label_tensor.shape[1:],
        dtype=label_tensor.dtype,
        device=label_tensor.device,
    )
    index = label_tensor.long().unsqueeze(1).expand_as(onehot)
    return onehot.scatter_(1, index, 1)


def select_topk(prob_tensor: Tensor, topk: int = 1, dim: int = 1) -> Tensor:
    """1 (int32) at the `topk` largest entries along `dim`, 0 elsewhere."""
    if prob_tensor.dtype == torch.half and not prob_tensor.is_cuda:
        # CPU topk has no half kernel: the stable descending order gives the same entries.
        index = torch.argsort(prob_tensor, dim=dim, stable=True).flip(dim).narrow(dim, 0, topk)
    else:
        index = prob_tensor.topk(k=topk, dim=dim).indices
    return torch.zeros_like(prob_tensor, dtype=torch.int32).scatter_(dim, index, 1)


def to_categorical(x: Tensor, argmax_dim: int = 1) -> Tensor:
    """The index of the largest entry along `argmax_dim` (probabilities to labels)."""
    return torch.argmax(x, dim=argmax_dim)
