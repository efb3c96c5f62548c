"""`step_closure` and `checkpoint_closure`: host-side code that runs once a step's values exist.

Where a closure is called decides when it runs:

* inside a traced step: it is held until the step returns; its tensor arguments are then
  materialised (their values as of the end of the step) and it runs after the step;
* in the body of a `DataExecutor` loop, outside the step: it is queued and runs at the end of
  the executor's step, with the tensors' values as of then (the last value set, as in cstorch);
* anywhere else: it runs at once, with host copies of its tensor arguments.

Queued closures run in the order they were called. A compiled step breaks its graph at each
closure call (see `_eager`). On CUDA a closure waits for the non-blocking
copy of its arguments rather than for the device, so the host never stalls the device.
A checkpoint closure is a step closure that runs only on the executor's checkpoint steps
(k-1, 2k-1, ... and the last step, for `checkpoint_steps=k`); calls on other steps are dropped.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar, cast

from torchtally.runtime._eager import EagerOnly
from torchtally.runtime._queue import PendingCall
from torchtally.runtime._run_context import current_run
from torchtally.runtime._step import current_step_calls

__all__ = ["checkpoint_closure", "step_closure", "submit", "submit_eagerly"]

_F = TypeVar("_F", bound=Callable[..., Any])


def step_closure(fn: _F) -> _F:
    """Decorate a function that reads tensors so that it runs after the step, not during it.

    Args:
        fn: The function. Its tensor arguments arrive as host copies holding the values the
            tensors had when the step ended.

    Returns:
        A function with the same signature that returns None: calling it schedules `fn`.

    Example:
        >>> @step_closure
        ... def log_loss(loss):
        ...     print("Loss:", loss.item())
    """
    return _closure(fn, "fn", checkpoint=False)


def checkpoint_closure(fn: _F) -> _F:
    """Decorate a function that saves a checkpoint; it runs only on checkpoint steps.

    Args:
        fn: The function, typically building a state dict and calling `save`.

    Returns:
        A function with the same signature that returns None. Inside a `DataExecutor` loop a
        call on a checkpoint step runs after the step; a call on any other step is dropped.
        Outside an executor loop every call runs (after the step, if made in one).

    Example:
        >>> @checkpoint_closure
        ... def save_checkpoint(step):
        ...     save({"model": model.state_dict()}, f"checkpoint_{step}.mdl")
    """
    return _closure(fn, "fn", checkpoint=True)


def _closure(fn: _F, name: str, *, checkpoint: bool) -> _F:
    if not callable(fn):
        raise TypeError(f"Argument `{name}` must be a callable. Received: {name}={fn!r}")

    @functools.wraps(fn)
    def closure(*args: Any, **kwargs: Any) -> None:
        submit_eagerly(fn, args, kwargs, checkpoint)

    return cast(_F, closure)


def submit(
    fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], checkpoint: bool
) -> None:
    """Schedule one closure call: hold it for the step, queue it on the run, or run it now.

    Args:
        fn: The function to call.
        args: Its positional arguments (tensors are materialised before the call).
        kwargs: Its keyword arguments.
        checkpoint: Run only on checkpoint steps of the current run.
    """
    run = current_run()
    if checkpoint and run is not None and not run.is_checkpoint_step():
        return
    call = PendingCall(fn, args, kwargs, checkpoint=checkpoint)
    step_calls = current_step_calls()
    if step_calls is not None:
        step_calls.append(call)
    elif run is not None:
        run.queue.add(call)  # materialised at the end of the executor's step
    else:
        call.run()


#: `submit`, run eagerly (a graph break) when called from a compiled step.
submit_eagerly = EagerOnly(submit)
