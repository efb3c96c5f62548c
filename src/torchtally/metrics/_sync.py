"""Exact global metric state over torch.distributed: one collective per (dtype, reduction).

Every rank holds states of identical shapes (they are preallocated from the constructor's
arguments), so a sync is a fixed sequence of collectives that every rank issues identically:
no shapes are exchanged, nothing is pickled, no `.item()` is needed to size a buffer, and a rank
that saw no data simply contributes zeros. States are packed by (dtype, reduction) into one flat
buffer each; `cat` states are all-gathered at their full capacity with their fill counts, and
the valid rows are compacted with a scatter.

Two guards make a misconfigured or stuck job fail loudly instead of silently or forever:

- **Configuration fingerprint.** Before any state moves, one tiny all-reduce compares a hash
  of the state layout of every metric being synced (class, name, configuration, and each
  state's name, shape, dtype and reduction, in order). Ranks that disagree (MSE on one rank
  and MAE on another, a collection's keys in another order, MeanIOU(3) against MeanIOU(4), an
  AUROC capacity of 100 against 200) all raise `SyncConfigurationError`, naming the first
  difference, instead of reducing unrelated numbers or crashing inside the backend.
- **Timeout.** Every collective is waited for at most `sync_timeout()` seconds (60 by default,
  `set_sync_timeout` or the `TORCHTALLY_SYNC_TIMEOUT` environment variable to change it). A
  rank that never calls `compute()`, or dies mid-sync, makes every surviving rank raise
  `SyncTimeoutError` naming the collective, instead of blocking for the process group's own
  timeout (30 minutes for gloo).
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import defaultdict
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist
from torch import Tensor

from torchtally.metrics._runtime import COUNT_SUFFIX, runtime_of

#: A metric, as this module sees it: `states()`, `name`, `shared_statistic()`, `_buffers`.
Metric = Any

__all__ = [
    "SyncConfigurationError",
    "SyncTimeoutError",
    "distributed_world_size",
    "layout_signature",
    "set_sync_timeout",
    "sync_states",
    "sync_timeout",
    "unsync_states",
]

_OPS = {"sum": "sum", "max": "max", "min": "min"}
_REDUCE_OPS = {"sum": dist.ReduceOp.SUM, "max": dist.ReduceOp.MAX, "min": dist.ReduceOp.MIN}
_DEFAULT_TIMEOUT = 60.0
_timeout: float | None = None


class SyncConfigurationError(RuntimeError):
    """Ranks tried to sync metrics whose configurations (state layouts) differ."""


class SyncTimeoutError(RuntimeError):
    """A sync collective did not complete in time (a rank is missing, stuck or dead)."""


def set_sync_timeout(seconds: float | None) -> None:
    """Set how long a metric sync waits for each collective (None: back to the default,
    `TORCHTALLY_SYNC_TIMEOUT` or 60 s)."""
    global _timeout
    if seconds is not None and (isinstance(seconds, bool) or not seconds > 0):
        raise ValueError(
            f"Argument `seconds` must be a positive number or None. Received: seconds={seconds!r}"
        )
    _timeout = None if seconds is None else float(seconds)


def sync_timeout() -> float:
    """Seconds a metric sync waits for each collective before raising `SyncTimeoutError`."""
    if _timeout is not None:
        return _timeout
    env = os.environ.get("TORCHTALLY_SYNC_TIMEOUT")
    if env:
        try:
            value = float(env)
        except ValueError:
            value = -1.0
        if not value > 0:
            raise ValueError(
                "Environment variable `TORCHTALLY_SYNC_TIMEOUT` must be a positive number of "
                f"seconds. Received: {env!r}"
            )
        return value
    return _DEFAULT_TIMEOUT


def distributed_world_size(group: Any = None) -> int:
    """World size of `group` when torch.distributed is initialized, else 1."""
    if not (dist.is_available() and dist.is_initialized()):
        return 1
    return dist.get_world_size(group)


_LOCKS: dict[int, threading.RLock] = {}
_LOCKS_GUARD = threading.Lock()


def _lock_for(pg: Any) -> threading.RLock:
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(id(pg), threading.RLock())


def _group(group: Any) -> Any:
    return group if group is not None else dist.group.WORLD


def _wait(work: Any, what: str, pg: Any) -> None:
    seconds = sync_timeout()
    try:
        work.wait(timeout=timedelta(seconds=seconds))
    except RuntimeError as error:
        world = dist.get_world_size(pg)
        raise SyncTimeoutError(
            f"torchtally metric sync: the {what} collective over {world} ranks did not "
            f"complete within {seconds:g} s (rank {dist.get_rank()} waited). Another rank "
            "did not reach the same compute()/sync() call: it skipped compute(), is still "
            "running, or died. Every rank must compute the same metrics in the same order. "
            f"Backend said: {error}"
        ) from error


def all_reduce(tensor: Tensor, op: str, pg: Any, what: str) -> Tensor:
    """`tensor` reduced over `pg` (a new tensor), waited for at most `sync_timeout()`."""
    out = tensor.clone()
    _wait(dist.all_reduce(out, op=_REDUCE_OPS[op], group=pg, async_op=True), what, pg)
    return out


def all_gather(tensor: Tensor, pg: Any, what: str) -> Tensor:
    """Every rank's `tensor` concatenated along dim 0, waited for at most `sync_timeout()`."""
    world = dist.get_world_size(pg)
    out = tensor.new_empty((world * tensor.shape[0], *tensor.shape[1:]))
    gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
    work = gather(out, tensor.contiguous(), group=pg, async_op=True)
    _wait(work, what, pg)
    return out


def layout_signature(metrics: Sequence[Metric]) -> list[str]:
    """One line per metric describing what a sync exchanges for it (its class, name,
    configuration and every state's name, shape, dtype and reduction), in sync order."""
    lines = []
    for metric in metrics:
        states = ", ".join(
            f"{name}{list(buffer.shape)}:{str(buffer.dtype).removeprefix('torch.')}:{reduction}"
            for name, buffer, reduction in metric.states()
        )
        lines.append(f"{type(metric).__qualname__}({_configuration(metric)}) [{states}]")
    return lines


#: Public attributes that may legitimately differ between ranks.
_RANK_LOCAL_ATTRIBUTES = frozenset({"training", "sync_on_compute", "check_values", "process_group"})


def _configuration(metric: Metric) -> str:
    """The metric's plain public settings (its name, `average`, `k`, ...) and its shared
    statistic: what `compute` depends on beyond the state layout (macro against micro F1)."""
    items = [
        f"{key}={value!r}"
        for key, value in sorted(vars(metric).items())
        if not key.startswith("_") and key not in _RANK_LOCAL_ATTRIBUTES and _plain(value)
    ]
    statistic = repr(metric.shared_statistic())
    if " at 0x" not in statistic:  # an object's address differs on every rank
        items.append(f"statistic={statistic}")
    return ", ".join(items)


def _plain(value: Any) -> bool:
    if value is None or isinstance(value, bool | int | float | str | torch.dtype):
        return True
    return isinstance(value, tuple | list) and len(value) <= 64 and all(map(_plain, value))


def _check_same_layout(metrics: Sequence[Metric], pg: Any) -> None:
    """Raise `SyncConfigurationError` on every rank unless all ranks sync the same layout.

    One all-reduce of two int64s: max(h) and max(-h) of a 62-bit hash are equal to this
    rank's h and -h on every rank exactly when all hashes are equal, so every rank sees a
    mismatch together and none goes on into collectives of different sizes.
    """
    lines = layout_signature(metrics)
    digest = hashlib.blake2b("\n".join(lines).encode(), digest_size=8).digest()
    h = int.from_bytes(digest, "little") >> 2
    device = _device(metrics)
    mine = torch.tensor([h, -h], dtype=torch.int64, device=device)
    seen = all_reduce(mine, "max", pg, "configuration check (all_reduce int64[2])")
    if torch.equal(seen.cpu(), mine.cpu()):
        return
    # The rare path: every rank is here, so a pickled exchange names the difference.
    world = dist.get_world_size(pg)
    everyone: list[Any] = [None] * world
    dist.all_gather_object(everyone, lines, group=pg)
    rank = dist.get_rank(pg)
    for other, theirs in enumerate(everyone):
        if theirs != lines:
            raise SyncConfigurationError(
                "torchtally metric sync: metric configurations differ across ranks, so their "
                "states cannot be combined. "
                + _first_difference(rank, lines, other, theirs)
                + " Every rank must create the same metrics, with the same arguments, in the "
                "same order."
            )


def _first_difference(rank: int, mine: list[str], other: int, theirs: list[str]) -> str:
    for index in range(max(len(mine), len(theirs))):
        a = mine[index] if index < len(mine) else "(none)"
        b = theirs[index] if index < len(theirs) else "(none)"
        if a != b:
            return f"Metric #{index}: rank {rank} has {a}; rank {other} has {b}."
    return f"Rank {rank} and rank {other} differ."


def _device(metrics: Sequence[Metric]) -> torch.device:
    for metric in metrics:
        for _, buffer, _ in metric.states():
            return buffer.device  # type: ignore[no-any-return]
    return torch.device("cpu")


def sync_states(metrics: Sequence[Metric], group: Any = None) -> None:
    """Replace the states of `metrics` with their global values (saving the local ones).

    Call it on every rank with the same metrics in the same order (what a collection's or a
    metric's compute does). `unsync_states` restores the local states.
    """
    for metric in metrics:
        _save_local_states(metric)
    pg = _group(group)
    try:
        # One sync at a time per process group: two threads computing different metrics
        # would otherwise interleave their collectives. Threads that must sync concurrently
        # need a process group each (`metric.process_group = dist.new_group()`): ranks cannot
        # agree on the order in which their threads take a lock.
        with _lock_for(pg):
            _check_same_layout(metrics, pg)
            _reduce_groups(metrics, pg)
            _gather_cat_states(metrics, pg)
    except BaseException:
        unsync_states(metrics)  # leave the local state usable, whatever went wrong
        raise


def unsync_states(metrics: Sequence[Metric]) -> None:
    """Restore the local states saved by `sync_states`."""
    for metric in metrics:
        _restore_local_states(metric)


def _save_local_states(metric: Metric) -> None:
    """Keep a copy of the local states, which a sync is about to replace."""
    metric.flush()
    runtime = runtime_of(metric)
    if runtime.local_states is not None:
        raise RuntimeError(
            f"Metric `{metric.name}` is already synced; call unsync() before syncing again"
        )
    runtime.local_states = {n: b.clone() for n, b in metric._buffers.items() if b is not None}
    runtime.drop_caches()


def _restore_local_states(metric: Metric) -> None:
    """Put back the local states saved by `_save_local_states` (no-op when not synced)."""
    runtime = runtime_of(metric)
    local = runtime.local_states
    if local is None:
        return
    for name, value in local.items():
        current = metric._buffers[name]
        if current is not None and current.shape == value.shape:
            current.copy_(value)
        else:
            metric._buffers[name] = value
    runtime.local_states = None
    runtime.synced_cat_counts = {}
    runtime.drop_caches()


def _reduce_groups(metrics: Sequence[Metric], pg: Any) -> None:
    groups: dict[tuple[torch.dtype, str], list[Tensor]] = defaultdict(list)
    for metric in metrics:
        cat_counts = {n + COUNT_SUFFIX for n, _, r in metric.states() if r == "cat"}
        for name, buffer, reduction in metric.states():
            if reduction != "cat" and name not in cat_counts:
                groups[(buffer.dtype, reduction)].append(buffer)
    for (_, op), buffers in groups.items():
        flat = torch.cat([b.reshape(-1) for b in buffers])
        what = f"state sync (all_reduce {op} {str(flat.dtype).removeprefix('torch.')}"
        reduced = all_reduce(flat, _OPS[op], pg, f"{what}[{flat.numel()}])")
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
    counts = torch.cat([m._buffers[n + COUNT_SUFFIX].reshape(1) for m, n, _ in entries])
    all_counts = all_gather(counts, pg, "cat fill counts (all_gather int64)")
    all_counts = all_counts.view(world, len(entries))
    by_dtype: dict[torch.dtype, list[int]] = defaultdict(list)
    for index, (_, _, buffer) in enumerate(entries):
        by_dtype[buffer.dtype].append(index)
    for indices in by_dtype.values():
        flat = torch.cat([entries[i][2].reshape(-1) for i in indices])
        what = f"cat rows (all_gather {str(flat.dtype).removeprefix('torch.')}[{flat.numel()}])"
        gathered = all_gather(flat, pg, what).view(world, -1)
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
    # Every rank's rows replace the local ones until unsync; each rank's own count is kept for
    # an overflow message in the rows each rank really saw.
    metric._buffers[name] = merged
    metric._buffers[name + COUNT_SUFFIX] = count.reshape(1)
    runtime = runtime_of(metric)
    runtime.synced_cat_counts[name] = counts
    runtime.drop_caches()
