"""`RestartableDataLoader`: cstorch's protocol for a loader whose position can be checkpointed,
and a torch `DataLoader` that implements it, so that a run resumes mid-epoch at the same sample.

In cstorch 2.10, `RestartableDataLoader` is a runtime-checkable protocol: any loader with
`state_dict`, `load_state_dict(state_dict, strict=True)`, `aggregate_state_dict(worker_states)`
and `deaggregate_state_dict(aggregated_state_dict, strict=True)` is one, and the cstorch
`DataLoader` saves and restores its state through those four methods (each streaming worker's
`state_dict`, combined by `aggregate_state_dict` into what the checkpoint holds, split back by
`deaggregate_state_dict` for each worker's `load_state_dict`). Here `isinstance` checks the same
structure, and the class is also a ready-made implementation: a `torch.utils.data.DataLoader`
whose shuffling is seeded per epoch from one seed, and whose state is the epoch, the batches
yielded in it and the seed. Loading that state makes the next `iter()` start that epoch at that
batch, with the same order, skipping the indices already seen without loading their samples.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch
from torch.utils.data import DataLoader as TorchDataLoader
from torch.utils.data import IterableDataset, RandomSampler

__all__ = ["RestartableDataLoader"]

_PROTOCOL = ("state_dict", "load_state_dict", "aggregate_state_dict", "deaggregate_state_dict")
_STATE_KEYS = ("epoch", "batches_yielded", "seed", "batches_per_epoch")
_MASK = (1 << 64) - 1


def _derive(seed: int, epoch: int, stream: int) -> int:
    # Distinct, reproducible seeds for each epoch's order (stream 0) and worker seeds (stream 1).
    return (seed + epoch * 0x9E3779B97F4A7C15 + stream * 0xBF58476D1CE4E5B9) & _MASK


def _rank_and_world_size() -> tuple[int, int]:
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        return torch.distributed.get_rank(), torch.distributed.get_world_size()
    return 0, 1


class _RestartableMeta(type):
    """`isinstance(x, RestartableDataLoader)` is structural, as for cstorch's runtime-checkable
    protocol: any object with the four methods counts."""

    def __instancecheck__(cls, instance: Any) -> bool:
        if type.__instancecheck__(cls, instance):
            return True
        if cls is not RestartableDataLoader:
            return False
        return all(callable(getattr(instance, name, None)) for name in _PROTOCOL)


class _SkipFirst:
    """An index sampler that drops its first `skip` items once (the batches a resumed epoch has
    already yielded); its length stays the whole epoch's."""

    def __init__(self, loader: RestartableDataLoader) -> None:
        self.loader = loader
        self.skip = 0

    def _base(self) -> Any:
        return TorchDataLoader._index_sampler.fget(self.loader)  # type: ignore[attr-defined]

    def __iter__(self) -> Iterator[Any]:
        skip, self.skip = self.skip, 0
        iterator = iter(self._base())
        for _ in range(skip):
            if next(iterator, _END) is _END:
                return
        yield from iterator

    def __len__(self) -> int:
        return len(self._base())


_END = object()


class _Counting:
    """The epoch's iterator: counts the batches it yields into the loader's position."""

    def __init__(self, loader: RestartableDataLoader, inner: Iterator[Any]) -> None:
        self.loader = loader
        self.inner = inner

    def __iter__(self) -> _Counting:
        return self

    def __next__(self) -> Any:
        if self.loader._current is not self:
            raise RuntimeError(
                "This iterator of a RestartableDataLoader is stale: a later `iter()` of the "
                "same loader started another epoch, and a loader tracks one epoch at a time."
            )
        batch = next(self.inner)
        self.loader._yielded += 1
        return batch

    def __len__(self) -> int:
        return len(self.loader)


class RestartableDataLoader(TorchDataLoader, metaclass=_RestartableMeta):  # type: ignore[type-arg]
    """A torch `DataLoader` that can resume mid-epoch at the same sample (cstorch's
    `RestartableDataLoader` protocol).

    It takes torch's `DataLoader` arguments plus `seed`. Every epoch's shuffle order, and the
    seeds of its loader workers, come from `seed` and the epoch number, so an epoch's batches
    do not depend on what ran before it. `state_dict()` is the position: the epoch in progress,
    the batches it has yielded, the seed and the epoch's length; after `load_state_dict`, the
    next `iter()` continues that epoch from that batch (the skipped indices are drawn, not
    loaded) and the epochs after it follow as in an uninterrupted run. A sampler with a
    `set_epoch` method (torch's or cstorch's `DistributedSampler`) is given each epoch's
    number. `aggregate_state_dict`/`deaggregate_state_dict` combine and split the states of the
    processes (ranks) of a run, as cstorch does for its streaming workers.

    The same batches are guaranteed when the dataset's items depend only on their index (and an
    iterable dataset yields the same stream each epoch, whose consumed batches are then read and
    dropped). Random transforms inside worker processes are seeded per epoch too, but which
    worker loads a batch shifts after a resume, so their draws differ.

    `isinstance(loader, RestartableDataLoader)` is true for any object with the four protocol
    methods, as it is for cstorch's runtime-checkable protocol.

    Args:
        dataset: As for `torch.utils.data.DataLoader`.
        batch_size: As for torch.
        shuffle: As for torch; the order is drawn from `seed` and the epoch.
        sampler: As for torch (its own randomness is its own, except `set_epoch`).
        batch_sampler: As for torch.
        num_workers: As for torch.
        collate_fn: As for torch.
        pin_memory: As for torch.
        drop_last: As for torch.
        timeout: As for torch.
        worker_init_fn: As for torch.
        multiprocessing_context: As for torch.
        generator: Its initial seed is the default `seed`; the generator itself is not drawn
            from or reseeded.
        seed: The run's seed; default: `generator`'s initial seed, else drawn from torch's
            global generator (so `torch.manual_seed` before construction fixes it).
        **kwargs: torch's keyword-only arguments (`prefetch_factor`, `persistent_workers`, ...).

    Example:
        >>> import torch
        >>> data = torch.utils.data.TensorDataset(torch.arange(8))
        >>> loader = RestartableDataLoader(data, batch_size=2, shuffle=True, seed=0)
        >>> batches = iter(loader)
        >>> first = next(batches)
        >>> state = loader.aggregate_state_dict([loader.state_dict()])  # into a checkpoint
        >>> rest = [b[0].tolist() for b in batches]
        >>> resumed = RestartableDataLoader(data, batch_size=2, shuffle=True)
        >>> resumed.load_state_dict(resumed.deaggregate_state_dict(state))
        >>> [b[0].tolist() for b in resumed] == rest
        True
    """

    def __init__(
        self,
        dataset: Any,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Any = None,
        batch_sampler: Any = None,
        num_workers: int = 0,
        collate_fn: Any = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Any = None,
        multiprocessing_context: Any = None,
        generator: torch.Generator | None = None,
        *,
        seed: int | None = None,
        **kwargs: Any,
    ) -> None:
        if seed is None:
            if generator is not None:
                seed = int(generator.initial_seed())
            else:
                seed = int(torch.randint(0, 2**62, ()).item())
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise TypeError(f"Argument `seed` must be an integer. Received: seed={seed!r}")
        self._seed = seed & _MASK
        self._order_generator = torch.Generator()
        if shuffle and sampler is None and batch_sampler is None:
            if isinstance(dataset, IterableDataset):
                raise ValueError(
                    "Argument `shuffle` must be False for an IterableDataset (torch cannot "
                    f"reorder a stream). Received: shuffle={shuffle!r}"
                )
            sampler, shuffle = RandomSampler(dataset, generator=self._order_generator), None
        super().__init__(
            dataset,
            batch_size=batch_size,
            shuffle=shuffle,
            sampler=sampler,
            batch_sampler=batch_sampler,
            num_workers=num_workers,
            collate_fn=collate_fn,
            pin_memory=pin_memory,
            drop_last=drop_last,
            timeout=timeout,
            worker_init_fn=worker_init_fn,
            multiprocessing_context=multiprocessing_context,
            generator=torch.Generator(),
            **kwargs,
        )
        self._skipper = _SkipFirst(self)
        self._epoch = 0  # the epoch in progress, or the next one when none is
        self._yielded = 0  # batches yielded in `_epoch`
        self._current: _Counting | None = None

    @property
    def _index_sampler(self) -> Any:
        if isinstance(self.dataset, IterableDataset):
            return TorchDataLoader._index_sampler.fget(self)  # type: ignore[attr-defined]
        return self._skipper

    def _epoch_length(self) -> int | None:
        try:
            return len(self)
        except TypeError:  # an iterable dataset without a length
            return None

    def __iter__(self) -> _Counting:  # type: ignore[override]
        if self._current is not None:
            # the previous iterator's epoch is done for this loader, finished or not
            self._epoch, self._yielded = self._epoch + 1, 0
        epoch, skip = self._epoch, self._yielded
        self._order_generator.manual_seed(_derive(self._seed, epoch, 0))
        assert self.generator is not None
        self.generator.manual_seed(_derive(self._seed, epoch, 1))
        for sampler in (self.sampler, getattr(self.batch_sampler, "sampler", None)):
            set_epoch = getattr(sampler, "set_epoch", None)
            if callable(set_epoch):
                set_epoch(epoch)
        iterable = isinstance(self.dataset, IterableDataset)
        if not iterable:
            self._skipper.skip = skip
        inner = super().__iter__()
        counting = _Counting(self, inner)
        self._current = counting
        if iterable:
            for _ in range(skip):  # a stream cannot skip without reading
                if next(inner, _END) is _END:
                    break
        return counting

    def state_dict(self) -> dict[str, Any]:
        """This process's position: the epoch in progress, the batches it has yielded, the
        seed and the batches per epoch (None when unknown).

        A finished epoch counts as the start of the next one.

        Returns:
            A dict of plain integers (None for an unknown length).

        Example:
            >>> loader = RestartableDataLoader(list(range(6)), batch_size=2, seed=3)
            >>> batches = iter(loader); _ = next(batches)
            >>> loader.state_dict()
            {'epoch': 0, 'batches_yielded': 1, 'seed': 3, 'batches_per_epoch': 3}
        """
        length = self._epoch_length()
        epoch, yielded = self._epoch, self._yielded
        if self._current is not None and length is not None and yielded >= length:
            epoch, yielded = epoch + 1, 0
        return {
            "epoch": epoch,
            "batches_yielded": yielded,
            "seed": self._seed,
            "batches_per_epoch": length,
        }

    def load_state_dict(self, state_dict: dict[str, Any], strict: bool = True) -> None:
        """Resume at `state_dict`'s position: the next `iter()` continues its epoch from its
        batch, with its seed.

        Args:
            state_dict: What `state_dict()` (or `deaggregate_state_dict`) returned.
            strict: Also refuse keys other than the four of `state_dict()`, and a different
                number of batches per epoch (another dataset, batch size or `drop_last`, where
                the same position would be other samples).

        Raises:
            ValueError: A key is missing or not an integer, or under `strict` as above.

        Example:
            >>> loader = RestartableDataLoader(list(range(6)), batch_size=2, seed=3)
            >>> loader.load_state_dict(
            ...     {"epoch": 2, "batches_yielded": 1, "seed": 3, "batches_per_epoch": 3})
            >>> [b.tolist() for b in loader]
            [[2, 3], [4, 5]]
        """
        if not isinstance(state_dict, dict):
            raise ValueError(
                "Argument `state_dict` must be a dict from RestartableDataLoader.state_dict(). "
                f"Received: {type(state_dict).__name__}"
            )
        missing = [k for k in ("epoch", "batches_yielded", "seed") if k not in state_dict]
        if missing:
            raise ValueError(
                f"Argument `state_dict` must have the keys {list(_STATE_KEYS)}; it lacks "
                f"{missing}. Received keys: {sorted(state_dict)}"
            )
        for key in ("epoch", "batches_yielded", "seed"):
            value = state_dict[key]
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(
                    f"Argument `state_dict[{key!r}]` must be an integer >= 0. "
                    f"Received: {key}={value!r}"
                )
        if strict:
            unknown = sorted(set(state_dict) - set(_STATE_KEYS))
            if unknown:
                raise ValueError(
                    f"Argument `state_dict` has keys a RestartableDataLoader does not save: "
                    f"{unknown} (pass strict=False to ignore them). Accepted: {list(_STATE_KEYS)}"
                )
            saved, length = state_dict.get("batches_per_epoch"), self._epoch_length()
            if saved is not None and length is not None and saved != length:
                raise ValueError(
                    f"The saved position is in epochs of {saved} batches but this loader's "
                    f"epochs have {length}: a different dataset, batch size or drop_last would "
                    "resume at other samples (pass strict=False to resume anyway)."
                )
        self._seed = state_dict["seed"] & _MASK
        self._epoch, self._yielded = state_dict["epoch"], state_dict["batches_yielded"]
        self._current = None

    def aggregate_state_dict(self, worker_states: list[dict[str, Any]]) -> dict[str, Any]:
        """Combine the `state_dict()` of every process of the run (in rank order) into the
        state a checkpoint holds.

        Args:
            worker_states: One state per rank; a single-process run passes one.

        Returns:
            `{"worker_states": worker_states}`.

        Raises:
            ValueError: `worker_states` is not a non-empty list of dicts.

        Example:
            >>> loader = RestartableDataLoader(list(range(4)), batch_size=2, seed=1)
            >>> loader.aggregate_state_dict([loader.state_dict()])["worker_states"][0]["seed"]
            1
        """
        if (
            not isinstance(worker_states, (list, tuple))
            or not worker_states
            or not all(isinstance(s, dict) for s in worker_states)
        ):
            raise ValueError(
                "Argument `worker_states` must be a non-empty list of state dicts, one per "
                f"process. Received: {worker_states!r}"
            )
        return {"worker_states": [dict(s) for s in worker_states]}

    def deaggregate_state_dict(
        self, aggregated_state_dict: dict[str, Any], strict: bool = True
    ) -> dict[str, Any]:
        """This process's state out of `aggregate_state_dict`'s result: the entry of its
        torch.distributed rank (0 without torch.distributed).

        Args:
            aggregated_state_dict: What `aggregate_state_dict` returned.
            strict: Refuse a checkpoint written by a different number of processes; without
                it, a rank past the saved ones takes the first saved state.

        Returns:
            The state to pass to `load_state_dict`.

        Raises:
            ValueError: The dict is not an aggregated state, or under `strict` the number of
                processes differs.

        Example:
            >>> loader = RestartableDataLoader(list(range(4)), batch_size=2, seed=1)
            >>> both = loader.aggregate_state_dict([loader.state_dict(), loader.state_dict()])
            >>> loader.deaggregate_state_dict(both, strict=False)["seed"]
            1
        """
        states = (
            aggregated_state_dict.get("worker_states")
            if isinstance(aggregated_state_dict, dict)
            else None
        )
        if not isinstance(states, list) or not states:
            raise ValueError(
                "Argument `aggregated_state_dict` must be what aggregate_state_dict returned "
                f"(a dict with a non-empty 'worker_states' list). Received: {aggregated_state_dict!r}"
            )
        rank, world_size = _rank_and_world_size()
        if strict and len(states) != world_size:
            raise ValueError(
                f"The checkpoint holds the loader states of {len(states)} processes but this "
                f"run has {world_size}; each rank would resume another rank's position "
                "(pass strict=False to resume every rank past them at the first saved state)."
            )
        state = states[rank] if rank < len(states) else states[0]
        return dict(state)
