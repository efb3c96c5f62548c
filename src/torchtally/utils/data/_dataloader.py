"""`DataLoader(input_fn, ...)`: a data loader that each process builds for itself.

cstorch streams data from many workers, which cannot share one loader object, so a loader is
described by a function that builds it. Under torch.distributed every rank calls the function
in its own process (shard with `shard_dataset`), and each of torch's loader worker processes
iterates its own copy of the dataset.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, final

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
