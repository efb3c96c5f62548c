"""Exact global metric state over torch.distributed: one collective per (dtype, reduction).

Every rank holds states of identical shapes (they are preallocated from the constructor's
arguments), so a sync is a fixed sequence of collectives that every rank issues identically:
no shapes are exchanged, nothing is pickled, no `.item()` is needed to size a buffer, and a rank
that saw no data simply contributes zeros. States are packed by (dtype, reduction) into one flat
buffer each; `cat` states are all-gathered at their full capacity with their fill counts, and
the valid rows are compacted with a scatter.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
from torch import Tensor

if TYPE_CHECKING:  # the metrics package imports this module: no runtime import back
    from torchtally.metrics._base import Metric

__all__ = ["distributed_world_size", "sync_states", "unsync_states"]

_OPS = {"sum": "sum", "max": "max", "min": "min"}


def distributed_world_size(group: Any = None) -> int:
    """World size of `group` when torch.distributed is initialized, else 1."""
    if not (dist.is_available() and dist.is_initialized()):
        return 1
    return dist.get_world_size(group)


def _group(group: Any) -> Any:
    return group if group is not None else dist.group.WORLD


def _wait(tensor: Tensor) -> Tensor:
    # functional collectives return lazily-waited tensors; materialise before reading slices
    return funcol.wait_tensor(tensor) if hasattr(funcol, "wait_tensor") else tensor


def sync_states(metrics: Sequence[Metric], group: Any = None) -> None:
    """Replace the states of `metrics` with their global values (saving the local ones).

    Call it on every rank with the same metrics in the same order (what a collection's or a
    metric's compute does). `unsync_states` restores the local states.
    """
    for metric in metrics:
        if metric._local_states is not None:
            raise RuntimeError(
                f"Metric `{metric.name}` is already synced; call unsync() before syncing again"
            )
        metric._local_states = {n: b.clone() for n, b in metric._buffers.items() if b is not None}
        metric._cached = None
    pg = _group(group)
    _reduce_groups(metrics, pg)
    _gather_cat_states(metrics, pg)


def unsync_states(metrics: Sequence[Metric]) -> None:
    """Restore the local states saved by `sync_states`."""
    for metric in metrics:
        local = metric._local_states
        if local is None:
            continue
        for name, value in local.items():
            current = metric._buffers[name]
            if current is not None and current.shape == value.shape:
                current.copy_(value)
            else:
                metric._buffers[name] = value
        metric._local_states = None
        metric._cached = None


def _reduce_groups(metrics: Sequence[Metric], pg: Any) -> None:
    groups: dict[tuple[torch.dtype, str], list[Tensor]] = defaultdict(list)
    for metric in metrics:
        cat_counts = {metric.cat_count_name(n) for n, _, r in metric.states() if r == "cat"}
        for name, buffer, reduction in metric.states():
            if reduction != "cat" and name not in cat_counts:
                groups[(buffer.dtype, reduction)].append(buffer)
    for (_, op), buffers in groups.items():
        flat = torch.cat([b.reshape(-1) for b in buffers])
        reduced = _wait(funcol.all_reduce(flat, _OPS[op], pg))
        offset = 0
        for buffer in buffers:
            size = buffer.numel()
            buffer.copy_(reduced[offset : offset + size].view_as(buffer))
            offset += size


def _gather_cat_states(metrics: Sequence[Metric], pg: Any) -> None:
    entries = [(m, n, b) for m in metrics for n, b, r in m.states() if r == "cat"]
    if not entries:
        return
    world = dist.get_world_size(pg)
    counts = torch.cat([m._buffers[m.cat_count_name(n)].reshape(1) for m, n, _ in entries])  # type: ignore[union-attr]
    all_counts = _wait(funcol.all_gather_tensor(counts, 0, pg)).view(world, len(entries))
    by_dtype: dict[torch.dtype, list[int]] = defaultdict(list)
    for index, (_, _, buffer) in enumerate(entries):
        by_dtype[buffer.dtype].append(index)
    for indices in by_dtype.values():
        flat = torch.cat([entries[i][2].reshape(-1) for i in indices])
        gathered = _wait(funcol.all_gather_tensor(flat, 0, pg)).view(world, -1)
        offset = 0
        for i in indices:
            metric, name, buffer = entries[i]
            size = buffer.numel()
            per_rank = gathered[:, offset : offset + size].reshape(world, *buffer.shape)
            _install_gathered(metric, name, per_rank, all_counts[:, i])
            offset += size


def _install_gathered(metric: Metric, name: str, per_rank: Tensor, counts: Tensor) -> None:
    """Compact every rank's valid rows into one buffer of the combined capacity."""
    world, rows = per_rank.shape[0], per_rank.shape[1]
    capacity = rows - 1  # the last row is the overflow spare
    valid = counts.clamp(max=capacity)
    starts = torch.cumsum(valid, 0) - valid
    row = torch.arange(capacity, device=per_rank.device)
    total_capacity = world * capacity
    dest = torch.where(row < valid[:, None], starts[:, None] + row, total_capacity)
    merged = per_rank.new_zeros((total_capacity + 1, *per_rank.shape[2:]))
    merged.index_copy_(0, dest.reshape(-1), per_rank[:, :capacity].reshape(-1, *per_rank.shape[2:]))
    overflow = (counts - valid).sum()
    # Keep `count - capacity` equal to the rows lost on any rank, so overflow still raises.
    count = torch.where(overflow > 0, total_capacity + overflow, valid.sum())
    metric._buffers[name] = merged
    metric._buffers[metric.cat_count_name(name)] = count.reshape(1)
