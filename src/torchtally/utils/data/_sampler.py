"""`DistributedSampler`: cstorch's map-style sampler (shuffle, skip, batch), off a Cerebras system.

cstorch's sampler orders samples so that the order does not depend on how many systems and
workers stream them, then splits batches across Cerebras systems. Off a Cerebras system there is
one stream, so what is left is the order: a permutation seeded with `seed + epoch` (or the
sequence), optionally stretched or cut to `num_samples` per epoch, started at `start_index`,
and grouped into batches where, with `drop_last`, an epoch's incomplete last batch is carried
into the next epoch rather than dropped. It does not split samples across torch.distributed
ranks (neither does cstorch off a Cerebras system): use `shard_dataset` for that.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sized
from typing import Any

import torch

__all__ = ["DistributedSampler", "pad_index"]

pad_index = object()
"""Stands in for a sample index in a padded last batch (`pad_last=True`)."""


class _Order:
    """The sample indices of each epoch: shuffled or in sequence, resized, from a start index."""

    def __init__(
        self,
        data_source: Sized,
        num_samples: int | None,
        shuffle: bool,
        seed: int | None,
        start_index: int,
    ) -> None:
        self._source = data_source
        self._num_samples = num_samples
        size = self.num_samples
        if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
            raise ValueError(
                f"Argument `num_samples` must be an integer >= 1. Received: num_samples={size!r}"
            )
        self._frozen = size
        if shuffle and not isinstance(seed, int):
            raise ValueError(
                f"Argument `seed` must be an integer when shuffle=True. Received: seed={seed!r}"
            )
        self.shuffle, self.seed = shuffle, seed
        self.epoch, self.start = divmod(start_index, size)

    @property
    def num_samples(self) -> int:
        return len(self._source) if self._num_samples is None else self._num_samples

    def __len__(self) -> int:
        return self.num_samples - self.start

    def __iter__(self) -> Iterator[int]:
        if self.num_samples != self._frozen:
            raise RuntimeError(
                f"The dataset's length changed from {self._frozen} to {self.num_samples} between "
                "epochs; DistributedSampler needs the same length every epoch."
            )
        n, size = len(self._source), self.num_samples
        if self.shuffle:
            assert self.seed is not None
            gen = torch.Generator().manual_seed(self.seed + self.epoch)
            if size > n:
                # Whole copies of the dataset, then one shuffled copy, cut to size and shuffled.
                repeats = math.ceil(size / n)
                base = torch.cat(
                    [torch.arange(n)] * (repeats - 1) + [torch.randperm(n, generator=gen)]
                )
                order = base[:size][torch.randperm(size, generator=gen)]
            else:
                order = torch.randperm(n, generator=gen)[:size]
            yield from order[self.start :].tolist()
        else:
            yield from (i % n for i in range(self.start, size))
        self.epoch += 1
        self.start = 0


class _Batches:
    """Group indices into batches; with drop_last an epoch's remainder starts the next epoch."""

    def __init__(self, indices: _Order, batch_size: int, drop_last: bool, pad_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(
                f"Argument `batch_size` must be an integer >= 1. Received: batch_size={batch_size!r}"
            )
        if not isinstance(drop_last, bool):
            raise ValueError(
                f"Argument `drop_last` must be a bool. Received: drop_last={drop_last!r}"
            )
        self.indices, self.batch_size = indices, batch_size
        self.drop_last, self.pad_last = drop_last, pad_last
        # An epoch shorter than a batch is read once up front, so the first batch spans epochs.
        self.carry: list[int] = list(indices) if len(indices) < batch_size else []

    def __len__(self) -> int:
        if self.drop_last:
            return (len(self.indices) + len(self.carry)) // self.batch_size
        return -(-len(self.indices) // self.batch_size)

    def __iter__(self) -> Iterator[list[Any]]:
        if self.drop_last:
            stream = itertools.chain(self.carry, self.indices)
            while True:
                full = list(itertools.islice(stream, self.batch_size))
                if len(full) < self.batch_size:
                    self.carry = full
                    return
                yield full
        batch: list[Any] = []
        for index in self.indices:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch:
            if self.pad_last:
                batch.extend([pad_index] * (self.batch_size - len(batch)))
            yield batch


class DistributedSampler(torch.utils.data.Sampler[Any]):
    """cstorch's sampler for map-style datasets: shuffle, skip to `start_index`, batch.

    Args:
        data_source: The dataset (anything with a length).
        shuffle: Shuffle each epoch with a generator seeded `seed + epoch`.
        seed: The shuffle seed (required when shuffling).
        start_index: Samples to skip, counted globally across epochs (to resume a run).
        shard: cstorch shards batches across Cerebras systems; off one there is nothing to
            shard, so this is accepted and has no effect.
        batch_size: Yield lists of this many indices (use with `batch_sampler=`); None yields
            single indices.
        drop_last: Carry an epoch's incomplete last batch into the next epoch.
        num_samples: Samples per epoch (the dataset is repeated or cut); default its length.
        pad_last: Without `drop_last`, pad the last batch with `pad_index` to full size.

    Example:
        >>> sampler = DistributedSampler(range(10), shuffle=False, batch_size=4)
        >>> list(sampler)
        [[0, 1, 2, 3], [4, 5, 6, 7]]
        >>> list(sampler)  # the leftover [8, 9] starts the next epoch
        [[8, 9, 0, 1], [2, 3, 4, 5], [6, 7, 8, 9]]
    """

    def __init__(
        self,
        data_source: Sized,
        shuffle: bool = True,
        seed: int | None = None,
        start_index: int = 0,
        shard: bool = True,
        batch_size: int | None = None,
        drop_last: bool = True,
        num_samples: int | None = None,
        pad_last: bool = False,
    ) -> None:
        if not isinstance(start_index, int) or isinstance(start_index, bool) or start_index < 0:
            raise ValueError(
                f"Argument `start_index` must be an integer >= 0. Received: start_index={start_index!r}"
            )
        order = _Order(data_source, num_samples, shuffle, seed, start_index)
        self.sampler: _Order | _Batches = (
            order if batch_size is None else _Batches(order, batch_size, drop_last, pad_last)
        )
        self.kwargs = {
            "data_source": data_source,
            "shuffle": shuffle,
            "seed": seed,
            "shard": shard,
            "batch_size": batch_size,
            "drop_last": drop_last,
            "num_samples": num_samples,
            "pad_last": pad_last,
        }

    def __iter__(self) -> Iterator[Any]:
        return iter(self.sampler)

    def __len__(self) -> int:
        return len(self.sampler)

    def set_state(self, start_index: int) -> None:
        """Restart deterministically after `start_index` samples of a previous run."""
        self.__init__(**self.kwargs, start_index=start_index)  # type: ignore[misc]
