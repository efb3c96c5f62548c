"""Materialising a closure's arguments: the host copy of every tensor, as of the end of a step.

On CPU the copy is a clone, made at once. On CUDA it is a non-blocking copy into pinned host
memory followed by a CUDA event: the copy is queued behind the step's kernels, the host moves on,
and the closure runs once the event reports that the copy is done, so the device never waits
for the host.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, final

import torch

__all__ = ["Materialized", "materialize"]


@final
class Materialized:
    """Host copies of a call's arguments, possibly still in flight.

    Args:
        args: Positional arguments with tensors replaced by their host copies.
        kwargs: Keyword arguments, likewise.
        events: One CUDA event per device whose copies are in flight (empty on CPU).

    Example:
        >>> m = materialize((torch.ones(2),), {})
        >>> m.ready()
        True
    """

    def __init__(self, args: tuple[Any, ...], kwargs: dict[str, Any], events: list[Any]) -> None:
        self.args = args
        self.kwargs = kwargs
        self._events = events

    def ready(self) -> bool:
        """Whether every host copy has landed (never blocks).

        Returns:
            True when the arguments can be read without waiting.
        """
        return all(event.query() for event in self._events)

    def wait(self) -> None:
        """Block until every host copy has landed."""
        for event in self._events:
            event.synchronize()


def materialize(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Materialized:
    """Start copying every tensor in `args`/`kwargs` (nested in lists, tuples, dicts) to the host.

    Args:
        args: Positional arguments of a closure call.
        kwargs: Keyword arguments of a closure call.

    Returns:
        The copies; call `wait()` (or poll `ready()`) before reading CUDA tensors' copies.

    Example:
        >>> t = torch.zeros(2)
        >>> m = materialize((t,), {})
        >>> t.add_(1)  # later in-place updates do not reach the copy
        tensor([1., 1.])
        >>> m.args[0]
        tensor([0., 0.])
    """
    devices: set[torch.device] = set()
    host_args = tuple(_copy(a, devices) for a in args)
    host_kwargs = {k: _copy(v, devices) for k, v in kwargs.items()}
    return Materialized(host_args, host_kwargs, [_record_event(d) for d in devices])


def _copy(value: Any, cuda_devices: set[torch.device]) -> Any:
    if isinstance(value, torch.Tensor):
        return _copy_tensor(value, cuda_devices)
    if isinstance(value, dict):  # dict subclasses come back as dicts (OrderedDict kept)
        copied = {k: _copy(v, cuda_devices) for k, v in value.items()}
        return OrderedDict(copied) if isinstance(value, OrderedDict) else copied
    if isinstance(value, list):
        return [_copy(v, cuda_devices) for v in value]
    if isinstance(value, tuple):
        items = [_copy(v, cuda_devices) for v in value]
        # namedtuples take their fields positionally
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    return value


def _copy_tensor(tensor: torch.Tensor, cuda_devices: set[torch.device]) -> torch.Tensor:
    tensor = tensor.detach()
    if tensor.device.type != "cuda":
        return tensor.clone()
    host = torch.empty(tensor.shape, dtype=tensor.dtype, device="cpu", pin_memory=True)
    host.copy_(tensor, non_blocking=True)
    cuda_devices.add(tensor.device)
    return host


def _record_event(device: torch.device) -> Any:
    event = torch.cuda.Event()
    event.record(torch.cuda.current_stream(device))
    return event
