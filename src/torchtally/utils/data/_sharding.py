"""Sharding data across ranks and loader workers, so each sees a distinct part of it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sized
from typing import Any, cast, final

import torch.distributed as dist
from torch.utils.data import Dataset, IterableDataset, Subset, get_worker_info

from torchtally._errors import check_int

__all__ = ["ShardedIterableDataset", "get_rank_and_world_size", "shard_dataset"]


def get_rank_and_world_size() -> tuple[int, int]:
    """This process's rank and the number of ranks (0 and 1 without torch.distributed).

    Returns:
        `(rank, world_size)` of the default process group.

    Example:
        >>> get_rank_and_world_size()
        (0, 1)
    """
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def shard_dataset(
    dataset: Any, rank: int | None = None, world_size: int | None = None
) -> Dataset[Any]:
    """The part of `dataset` that `rank` of `world_size` should load.

    A map-style dataset gives the items `rank, rank + world_size, ...`; an iterable dataset is
    wrapped in `ShardedIterableDataset` (which also splits across loader workers).

    Args:
        dataset: A map-style (sized) or iterable dataset.
        rank: This rank. Default: from torch.distributed.
        world_size: The number of ranks. Default: from torch.distributed.

    Returns:
        The shard.

    Example:
        >>> shard = shard_dataset(list(range(10)), rank=1, world_size=3)
        >>> [shard[i] for i in range(len(shard))]
        [1, 4, 7]
    """
    rank, world_size = _resolve(rank, world_size)
    if isinstance(dataset, IterableDataset) or not isinstance(dataset, Sized):
        return ShardedIterableDataset(dataset, rank=rank, world_size=world_size)
    indices = range(rank, len(dataset), world_size)
    return Subset(cast(Dataset[Any], dataset), indices)


@final
class ShardedIterableDataset(IterableDataset[Any]):
    """Every `world_size * num_workers`-th item of an iterable, offset by rank and worker.

    The rank is fixed when the wrapper is built (in the main process); the loader worker is
    found when iterating, inside the worker.

    Args:
        dataset: Any iterable (re-iterable, so each epoch starts again).
        rank: This rank. Default: from torch.distributed.
        world_size: The number of ranks. Default: from torch.distributed.

    Example:
        >>> list(ShardedIterableDataset(range(10), rank=0, world_size=4))
        [0, 4, 8]
    """

    def __init__(
        self, dataset: Iterable[Any], rank: int | None = None, world_size: int | None = None
    ) -> None:
        self.dataset = dataset
        self.rank, self.world_size = _resolve(rank, world_size)

    def __iter__(self) -> Iterator[Any]:
        info = get_worker_info()
        workers, worker = (info.num_workers, info.id) if info is not None else (1, 0)
        shards = self.world_size * workers
        shard = self.rank * workers + worker
        for index, item in enumerate(self.dataset):
            if index % shards == shard:
                yield item


def _resolve(rank: int | None, world_size: int | None) -> tuple[int, int]:
    default_rank, default_world = get_rank_and_world_size()
    rank = default_rank if rank is None else rank
    world_size = default_world if world_size is None else world_size
    check_int("world_size", world_size, 1)
    check_int("rank", rank, 0)
    if rank >= world_size:
        raise ValueError(
            f"Argument `rank` must be < world_size ({world_size}). Received: rank={rank}"
        )
    return rank, world_size
