"""`torchmetrics.utilities.distributed`: `gather_all_tensors` (every rank's tensor, whatever
its shape) and the `reduce` / `class_reduce` helpers."""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist
from torch import Tensor

__all__ = ["class_reduce", "gather_all_tensors", "reduce"]


def reduce(x: Tensor, reduction: str | None) -> Tensor:
    """`x` reduced by "elementwise_mean", "sum", or left as is ("none" / None).

    Raises:
        ValueError: another `reduction`.
    """
    if reduction == "elementwise_mean":
        return torch.mean(x)
    if reduction == "none" or reduction is None:
        return x
    if reduction == "sum":
        return torch.sum(x)
    raise ValueError(
        "Reduction parameter unknown: argument `reduction` must be 'elementwise_mean', 'sum', "
        f"'none' or None. Received: reduction={reduction!r}"
    )


_CLASS_REDUCTIONS = ("micro", "macro", "weighted", "none", None)


def class_reduce(
    num: Tensor, denom: Tensor, weights: Tensor, class_reduction: str | None = "none"
) -> Tensor:
    """`num / denom` per class (0 where `denom` is 0), reduced: "micro" (sums first),
    "macro" (mean), "weighted" (by `weights`), "none" / None (per class).

    Raises:
        ValueError: another `class_reduction`.
    """
    if class_reduction not in _CLASS_REDUCTIONS:
        raise ValueError(
            f"Reduction parameter {class_reduction} unknown. Choose between one of these: "
            f"{_CLASS_REDUCTIONS}"
        )
    fraction = num.sum() / denom.sum() if class_reduction == "micro" else num / denom
    fraction = torch.nan_to_num(fraction, nan=0.0)
    if class_reduction == "macro":
        return torch.mean(fraction)
    if class_reduction == "weighted":
        return torch.sum(fraction * (weights.float() / torch.sum(weights)))
    return fraction


def gather_all_tensors(result: Tensor, group: Any = None) -> list[Tensor]:
    """Every rank's `result`, indexed by rank, on every rank (a collective: all ranks call it).

    Tensors may differ in every dimension's size (not in their number): sizes are exchanged
    first, each is padded to the largest, gathered and cut back. The own rank's entry is
    `result` itself, so autograd flows through it.
    """
    if group is None:
        group = dist.group.WORLD
    result = result.contiguous()
    world = dist.get_world_size(group)
    rank = dist.get_rank(group)
    if result.ndim == 0:
        return _gather_same_shape(result, group, world, rank)
    size = torch.tensor(result.shape, device=result.device)
    sizes = [torch.zeros_like(size) for _ in range(world)]
    dist.all_gather(sizes, size, group=group)
    stacked = torch.stack(sizes)
    largest = stacked.max(dim=0).values
    if bool((stacked == largest).all()):
        return _gather_same_shape(result, group, world, rank)
    padding: list[int] = []
    for dim in reversed(range(result.ndim)):
        padding.extend([0, int(largest[dim]) - result.shape[dim]])
    padded = torch.nn.functional.pad(result.detach(), padding)
    gathered = [torch.zeros_like(padded) for _ in range(world)]
    dist.all_gather(gathered, padded, group=group)
    out = []
    for index, (tensor, shape) in enumerate(zip(gathered, stacked.tolist(), strict=True)):
        out.append(result if index == rank else tensor[tuple(slice(0, s) for s in shape)])
    return out


def _gather_same_shape(result: Tensor, group: Any, world: int, rank: int) -> list[Tensor]:
    with torch.no_grad():
        gathered = [torch.zeros_like(result) for _ in range(world)]
        dist.all_gather(gathered, result, group=group)
    gathered[rank] = result
    return gathered
