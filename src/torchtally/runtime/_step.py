"""`trace` (alias `compile_step`): the decorator that makes a function one captured step.

Everything the step function does is the step: forward, backward, optimizer and metric
updates. While it runs, reading a tensor's value raises `TensorReadError` (see `_guard`), and
closures it calls are held back. When it returns, their arguments are materialised (the values
as of the end of the step) and the closures are handed to the executor's queue, or run at once
when no executor is driving the loop.

On CPU the step runs eagerly unless the backend asks for `torch.compile`; on GPU the backend's
`compile` option picks `torch.compile` (with `mode="reduce-overhead"` for CUDA graphs).
Unlike cstorch on a Cerebras system, which traces the step once and replays the graph, the
function runs on every call (or its compiled graph is re-guarded), so Python values that change
between steps are seen as they change.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from typing import Any, TypeVar, cast

import torch

from torchtally.runtime._backend import Backend, current_backend
from torchtally.runtime._eager import EagerOnly
from torchtally.runtime._guard import NoTensorReads
from torchtally.runtime._queue import PendingCall
from torchtally.runtime._run_context import current_run

__all__ = ["compile_step", "current_step_calls", "in_step", "trace"]

_F = TypeVar("_F", bound=Callable[..., Any])

# The closure calls of the step in progress, or None when no step runs.
_step_calls: list[PendingCall] | None = None


def in_step() -> bool:
    """Whether a traced step is running.

    Returns:
        True inside a function decorated with `trace` / `compile_step`.

    Example:
        >>> in_step()
        False
    """
    return _step_calls is not None


def current_step_calls() -> list[PendingCall] | None:
    """The list collecting the running step's closure calls (None outside a step)."""
    return _step_calls


def trace(step_fn: _F) -> _F:
    """Decorate a function whose whole body is one training or evaluation step.

    Args:
        step_fn: The step function. It may take any arguments (a batch, usually) and return
            anything (the loss, usually).

    Returns:
        A function with the same signature. Calling it runs the step under the read guard
        (reading a tensor's value raises `TensorReadError`), compiled with `torch.compile`
        when the current backend asks for it, then releases the closures the step called.

    Example:
        >>> @trace
        ... def training_step(batch):
        ...     inputs, targets = batch
        ...     loss = loss_fn(compiled_model(inputs), targets)
        ...     optimizer_step(loss, optimizer, None)
        ...     return loss
    """
    if not callable(step_fn):
        raise TypeError(
            "Argument `step_fn` must be a callable (the step function). "
            f"Received: step_fn={step_fn!r}"
        )
    name = getattr(step_fn, "__qualname__", type(step_fn).__name__)
    compiled: weakref.WeakKeyDictionary[Backend, Callable[..., Any]] = weakref.WeakKeyDictionary()

    @functools.wraps(step_fn)
    def traced(*args: Any, **kwargs: Any) -> Any:
        if in_step():  # a traced function called by a step is part of that step
            return step_fn(*args, **kwargs)
        runner = _runner(step_fn, current_backend(), compiled)
        result, calls = _run_guarded(runner, name, args, kwargs)
        _release(calls)
        return result

    return cast(_F, traced)


#: cstorch's original name for `trace`.
compile_step = trace


def _run_guarded(
    runner: Callable[..., Any], name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[Any, list[PendingCall]]:
    """Run the step under the read guard; return its result and the closure calls it made."""
    global _step_calls
    calls: list[PendingCall] = []
    _step_calls = calls
    try:
        with NoTensorReads(name):
            result = runner(*args, **kwargs)
    finally:
        _step_calls = None  # on error the queued closures are dropped with the step
    return result, calls


def _release(calls: list[PendingCall]) -> None:
    """Materialise the step's closure calls and queue them (or run them, outside a run)."""
    run = current_run()
    for call in calls:
        call.materialize()
        if run is not None:
            run.queue.add(call)
    if run is None:
        for call in calls:
            call.run()


def _runner(
    step_fn: Callable[..., Any],
    backend: Backend | None,
    cache: weakref.WeakKeyDictionary[Backend, Callable[..., Any]],
) -> Callable[..., Any]:
    """The step function itself, or its `torch.compile`d form when the backend asks for it."""
    if backend is None or backend.compile_options is None:
        return step_fn
    runner = cache.get(backend)
    if runner is None:
        EagerOnly.break_graphs()
        runner = torch.compile(step_fn, **backend.compile_options)
        cache[backend] = runner
    return runner
