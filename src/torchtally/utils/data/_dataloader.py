"""`DataLoader(input_fn, ...)`: a data loader that each process builds for itself.

cstorch streams data from many workers, which cannot share one loader object, so a loader is
described by a function that builds it. Under torch.distributed every rank calls the function
in its own process (shard with `shard_dataset`), and each of torch's loader worker processes
iterates its own copy of the dataset.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Iterable, Iterator
from typing import Any, final

import torch.distributed as dist

__all__ = ["DataLoader"]

_RESTARTABLE = ("state_dict", "load_state_dict", "aggregate_state_dict", "deaggregate_state_dict")


@final
class DataLoader:
    """A loader built on first use by `input_fn(*args, **kwargs)`.

    Args:
        input_fn: A function returning a `torch.utils.data.DataLoader` (any iterable of
            batches will do).
        *args: Passed to `input_fn`.
        **kwargs: Passed to `input_fn`.

    Example:
        >>> def input_fn(batch_size):
        ...     data = torch.utils.data.TensorDataset(torch.randn(8, 2), torch.zeros(8))
        ...     return torch.utils.data.DataLoader(data, batch_size=batch_size)
        >>> loader = DataLoader(input_fn, batch_size=4)
        >>> len(loader)
        2
    """

    def __init__(self, input_fn: Callable[..., Iterable[Any]], *args: Any, **kwargs: Any) -> None:
        if not callable(input_fn):
            raise TypeError(
                "Argument `input_fn` must be a callable that returns a torch DataLoader. "
                f"Received: input_fn={input_fn!r}"
            )
        self.input_fn = input_fn
        self.input_fn_args = args
        self.input_fn_kwargs = kwargs
        self._loader: Iterable[Any] | None = None

    @property
    def dataloader(self) -> Iterable[Any]:
        """The loader `input_fn` built (built on first access)."""
        if self._loader is None:
            loader = self.input_fn(*self.input_fn_args, **self.input_fn_kwargs)
            if not isinstance(loader, Iterable):
                raise TypeError(
                    "Argument `input_fn` must return an iterable of batches (a torch "
                    f"DataLoader). Received: input_fn returned {type(loader).__name__}"
                )
            self._loader = loader
        return self._loader

    @property
    def batch_size(self) -> int | None:
        """The built loader's `batch_size`, if it has one."""
        size = getattr(self.dataloader, "batch_size", None)
        return size if isinstance(size, int) else None

    @property
    def is_restartable(self) -> bool:
        """Whether the built loader implements cstorch's `RestartableDataLoader` protocol.

        That is: it has `state_dict`, `load_state_dict`, `aggregate_state_dict` and
        `deaggregate_state_dict` methods, so its position can be checkpointed.
        """
        loader = self.dataloader
        return all(callable(getattr(loader, name, None)) for name in _RESTARTABLE)

    def state_dict(self) -> dict[str, Any]:
        """The built loader's position, as a checkpoint holds it (cstorch's
        `DataLoader.state_dict`): every process's `state_dict()` (gathered across
        torch.distributed ranks, in rank order), combined by its `aggregate_state_dict`.

        Returns:
            The aggregated state (a copy).

        Raises:
            RuntimeError: The built loader does not implement `RestartableDataLoader`.

        Example:
            >>> from torchtally.utils.data import RestartableDataLoader
            >>> def input_fn():
            ...     return RestartableDataLoader(list(range(8)), batch_size=2, seed=0)
            >>> loader = DataLoader(input_fn)
            >>> batches = iter(loader); _ = next(batches)
            >>> loader.state_dict()["worker_states"][0]["batches_yielded"]
            1
        """
        loader = self._restartable("getting")
        state = loader.state_dict()
        if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
            states: list[Any] = [None] * dist.get_world_size()
            dist.all_gather_object(states, state)
        else:
            states = [state]
        return copy.deepcopy(loader.aggregate_state_dict(states))

    def load_state_dict(self, state_dict: dict[str, Any], strict: bool = True) -> None:
        """Restore the position `state_dict` saved: this process's part of it
        (`deaggregate_state_dict`) goes to the built loader's `load_state_dict`, so the next
        iteration continues where the saved run was (cstorch's `DataLoader.load_state_dict`).

        Args:
            state_dict: What `state_dict()` returned.
            strict: Passed on to both methods when they take it (older loaders do not).

        Raises:
            RuntimeError: The built loader does not implement `RestartableDataLoader`.
        """
        loader = self._restartable("setting")
        kwargs: dict[str, Any] = {}
        takes = [
            "strict" in inspect.signature(method).parameters
            for method in (loader.load_state_dict, loader.deaggregate_state_dict)
        ]
        if any(takes):
            if not all(takes):
                raise TypeError(
                    "Either both or neither of `load_state_dict` and `deaggregate_state_dict` "
                    f"must take `strict`. Received: a {type(loader).__name__} where only one does"
                )
            kwargs["strict"] = strict
        loader.load_state_dict(loader.deaggregate_state_dict(state_dict, **kwargs), **kwargs)

    def _restartable(self, what: str) -> Any:
        if not self.is_restartable:
            raise RuntimeError(
                f"DataLoader is not configured for {what} state: the loader `input_fn` built "
                f"({type(self.dataloader).__name__}) does not implement the "
                "RestartableDataLoader protocol (state_dict, load_state_dict, "
                "aggregate_state_dict, deaggregate_state_dict); build a "
                "torchtally.utils.data.RestartableDataLoader, or add those methods."
            )
        return self.dataloader

    def __iter__(self) -> Iterator[Any]:
        return iter(self.dataloader)

    def __len__(self) -> int:
        loader = self.dataloader
        if not hasattr(loader, "__len__"):
            raise TypeError(
                f"The loader built by `input_fn` ({type(loader).__name__}) has no length; pass "
                "`num_steps` to the DataExecutor."
            )
        return len(loader)  # type: ignore[arg-type]
