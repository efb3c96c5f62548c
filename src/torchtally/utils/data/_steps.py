"""`compute_num_steps` and `SyntheticDataset`: the step arithmetic and fake data model zoo uses."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import torch
import torch.utils._pytree as pytree

__all__ = ["SyntheticDataset", "compute_num_steps"]


def _check(name: str, value: Any, allow_none: bool = True, allow_zero: bool = False) -> None:
    if value is None:
        if not allow_none:
            raise ValueError(f"Argument `{name}` must be an integer. Received: {name}=None")
        return
    low = 0 if allow_zero else 1
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise ValueError(
            f"Argument `{name}` must be an integer >= {low}. Received: {name}={value!r}"
        )


def compute_num_steps(
    dataloader: Any,
    initial_step: int = 0,
    num_steps: int | None = None,
    max_steps: int | None = None,
    num_epochs: int | None = None,
    steps_per_epoch: int | None = None,
    grad_accum_steps: int = 1,
) -> int:
    """How many steps a run executes, from its step, epoch and accumulation settings (as cstorch).

    An epoch is `steps_per_epoch` batches (default: the loader's length) divided by
    `grad_accum_steps`. The result is the smallest of `num_epochs` epochs, `num_steps`, and
    `max_steps - initial_step`; a loader without a length counts one step per epoch and
    refuses `num_epochs`.

    Args:
        dataloader: The loader (its `len` is used when it has one).
        initial_step: The global step the run starts from (e.g. after loading a checkpoint).
        num_steps: Steps to run.
        max_steps: The global step to stop at.
        num_epochs: Epochs to run (not together with `num_steps`).
        steps_per_epoch: Batches per epoch, at most the loader's length.
        grad_accum_steps: Batches per optimizer step.

    Returns:
        The number of steps.

    Raises:
        ValueError: A setting is invalid or none of `num_steps`, `max_steps`, `num_epochs`
            is given.
        RuntimeError: `initial_step` is already at or past `max_steps`.

    Example:
        >>> compute_num_steps(range(10), num_epochs=2, grad_accum_steps=2)
        10
    """
    if num_epochs is not None and num_steps is not None:
        raise ValueError(
            "Arguments `num_epochs` and `num_steps` cannot both be given. "
            f"Received: num_epochs={num_epochs}, num_steps={num_steps}"
        )
    _check("initial_step", initial_step, allow_none=False, allow_zero=True)
    _check("num_steps", num_steps)
    _check("max_steps", max_steps)
    _check("num_epochs", num_epochs)
    _check("steps_per_epoch", steps_per_epoch)
    _check("grad_accum_steps", grad_accum_steps, allow_none=False)
    try:
        size = len(dataloader)
    except TypeError:
        size = None
    if size is None:
        if num_epochs is not None:
            raise ValueError(
                "Argument `num_epochs` needs a dataloader with a known length; control the run "
                f"with `num_steps` or `max_steps` instead. Received: num_epochs={num_epochs}"
            )
        per_epoch = 1
    else:
        if size < 1:
            raise ValueError("Argument `dataloader` yields no batches (its length is 0).")
        if steps_per_epoch is not None and steps_per_epoch > size:
            raise ValueError(
                f"Argument `steps_per_epoch` must be at most the dataloader's length {size}. "
                f"Received: steps_per_epoch={steps_per_epoch}"
            )
        per_epoch = steps_per_epoch if steps_per_epoch is not None else size
        if grad_accum_steps > per_epoch:
            raise ValueError(
                f"Argument `grad_accum_steps` must be at most the batches per epoch ({per_epoch}). "
                f"Received: grad_accum_steps={grad_accum_steps}"
            )
        per_epoch //= grad_accum_steps
    total = math.inf
    if num_epochs is not None:
        total = min(total, num_epochs * per_epoch)
    if num_steps is not None:
        total = min(total, num_steps)
    if max_steps is not None:
        remaining = max_steps - initial_step
        if remaining <= 0:
            raise RuntimeError(
                f"The initial step {initial_step} is already at or past max_steps={max_steps}."
            )
        total = min(total, remaining)
    if math.isinf(total):
        raise ValueError("One of the arguments `num_epochs`, `num_steps`, `max_steps` is required.")
    return int(total)


class SyntheticDataset(torch.utils.data.IterableDataset[Any]):
    """Samples shaped like real ones, made up on the fly (for smoke runs and compile checks).

    Args:
        sample_spec: A nest (dict, list, tuple, OrderedDict, namedtuple) whose leaves are
            tensors (each sample holds a clone) or callables (called with the sample index).
        num_samples: The dataset's length; None yields samples forever.

    Example:
        >>> data = SyntheticDataset({"x": torch.zeros(3), "i": lambda k: torch.tensor(k)}, 2)
        >>> [s["i"].item() for s in data]
        [0, 1]
    """

    def __init__(self, sample_spec: Any, num_samples: int | None = None) -> None:
        super().__init__()
        leaves, spec = pytree.tree_flatten(sample_spec)
        if not leaves:
            raise ValueError(
                "Argument `sample_spec` must be a non-empty nest of tensors or callables. "
                f"Received: sample_spec={sample_spec!r}"
            )
        for leaf in leaves:
            if not isinstance(leaf, torch.Tensor) and not callable(leaf):
                raise ValueError(
                    "Argument `sample_spec` must hold only tensors and callables. "
                    f"Received a leaf of type {type(leaf).__name__}."
                )
        if num_samples is not None and (
            not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples < 1
        ):
            raise ValueError(
                f"Argument `num_samples` must be an integer >= 1 or None. "
                f"Received: num_samples={num_samples!r}"
            )
        self._leaves: list[torch.Tensor | Callable[[int], Any]] = leaves
        self._spec = spec
        self.num_samples = num_samples

    def __iter__(self) -> Iterator[Any]:
        index = 0
        while self.num_samples is None or index < self.num_samples:
            values = [
                leaf.clone() if isinstance(leaf, torch.Tensor) else leaf(index)
                for leaf in self._leaves
            ]
            yield pytree.tree_unflatten(values, self._spec)
            index += 1

    def __len__(self) -> int:
        if self.num_samples is None:
            raise TypeError(
                "This SyntheticDataset is infinite (num_samples=None): it has no length."
            )
        return self.num_samples
