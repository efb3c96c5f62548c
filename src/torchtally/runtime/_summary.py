"""`summarize_scalar`: log a scalar to the executor's TensorBoard writer, from inside a step.

The value is treated like a step closure's argument: it is materialised when the step ends and
written once it is on the host, at the executor step during which `summarize_scalar` was
called. Without a writer (no executor, or one built without `writer=`) nothing is written.
"""

from __future__ import annotations

import warnings
from typing import Any

import torch

from torchtally.runtime._closures import submit
from torchtally.runtime._eager import EagerOnly
from torchtally.runtime._run_context import current_run

__all__ = ["summarize_scalar"]

_warned: set[str] = set()


def summarize_scalar(name: str, value: torch.Tensor | float) -> None:
    """Write `value` under `name` to the current executor's SummaryWriter after the step.

    Args:
        name: The TensorBoard tag.
        value: A one-element tensor (any device) or a Python number.

    Example:
        >>> from torch.utils.tensorboard import SummaryWriter
        >>> from torchtally.runtime import trace
        >>> from torchtally.utils.data import DataExecutor, DataLoader
        >>> def input_fn(batch_size):
        ...     data = torch.utils.data.TensorDataset(torch.arange(8.0))
        ...     return torch.utils.data.DataLoader(data, batch_size=batch_size)
        >>> writer = SummaryWriter("tb")
        >>> @trace
        ... def training_step(batch):
        ...     loss = batch[0].mean()
        ...     summarize_scalar("train/loss", loss)
        ...     return loss
        >>> for batch in DataExecutor(DataLoader(input_fn, batch_size=4), num_steps=2, writer=writer):
        ...     loss = training_step(batch)
        >>> writer.flush()
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"Argument `name` must be a non-empty string. Received: name={name!r}")
    if isinstance(value, torch.Tensor):
        if value.numel() != 1:  # a shape check: metadata, not a read
            raise ValueError(
                "Argument `value` must hold exactly one element. "
                f"Received: value of shape {tuple(value.shape)}"
            )
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"Argument `value` must be a tensor or a number. Received: value={value!r}")
    _summarize_eagerly(name, value)


def _summarize(name: str, value: torch.Tensor | float) -> None:
    run = current_run()
    if run is None or run.writer is None:
        _warn_once(name)
        return
    submit(_write_scalar, (run.writer, name, value, run.step), {}, False)


# Reads the run's Python state (writer, step number): a compiled step runs it eagerly.
_summarize_eagerly = EagerOnly(_summarize)


def _write_scalar(writer: Any, name: str, value: torch.Tensor | float, step: int) -> None:
    number = value.item() if isinstance(value, torch.Tensor) else value
    writer.add_scalar(name, number, global_step=step)


def _warn_once(name: str) -> None:
    if name not in _warned:
        _warned.add(name)
        warnings.warn(
            f"summarize_scalar({name!r}) has no SummaryWriter to write to: pass `writer=` to "
            "the DataExecutor driving the loop. The value is dropped.",
            stacklevel=5,
        )
