"""The run context: what closures and summaries need to know about the executor driving them.

A `DataExecutor` opens a run context for the length of its loop. Closures called while it is
open are queued on it and run at the end of the executor's step; checkpoint closures ask it
whether the current step is a checkpoint step; summaries take its writer and step number.
Runs nest (an evaluation loop inside a training loop): the innermost open run is current.
"""

from __future__ import annotations

from typing import Any, final

from torchtally._errors import check_int
from torchtally.runtime._queue import ClosureQueue

__all__ = ["RunContext", "current_run", "is_checkpoint_step"]

_open_runs: list[RunContext] = []


def current_run() -> RunContext | None:
    """The innermost open run context, or None outside any executor loop.

    Returns:
        The current `RunContext` or None.

    Example:
        >>> current_run() is None
        True
    """
    return _open_runs[-1] if _open_runs else None


def is_checkpoint_step(step: int, checkpoint_steps: int | None, num_steps: int) -> bool:
    """Whether 0-based `step` of a `num_steps` run is a checkpoint step.

    Args:
        step: The step index.
        checkpoint_steps: The interval k, or None for no checkpoint steps.
        num_steps: The run's length.

    Returns:
        True for steps k-1, 2k-1, ... and the last step.

    Example:
        >>> [s for s in range(7) if is_checkpoint_step(s, 3, 7)]
        [2, 5, 6]
    """
    if checkpoint_steps is None:
        return False
    return (step + 1) % checkpoint_steps == 0 or step == num_steps - 1


@final
class RunContext:
    """The step schedule, closure queue and summary writer of one executor run.

    Args:
        num_steps: How many steps the run has.
        checkpoint_steps: Checkpoint every this many steps (steps k-1, 2k-1, ... and the
            last, counting from 0), or None for no checkpoint steps.
        writer: A TensorBoard `SummaryWriter` for `summarize_scalar`, or None.

    Example:
        >>> with RunContext(num_steps=5, checkpoint_steps=2, writer=None) as run:
        ...     [run.is_checkpoint_step(s) for s in range(5)]
        [False, True, False, True, True]
    """

    def __init__(self, num_steps: int, checkpoint_steps: int | None, writer: Any) -> None:
        check_int("num_steps", num_steps, 1)
        check_int("checkpoint_steps", checkpoint_steps, 1, allow_none=True)
        self.num_steps = num_steps
        self.checkpoint_steps = checkpoint_steps
        self.writer = writer
        self.step = -1  # the 0-based index of the step in progress; -1 before the first
        self.queue = ClosureQueue()

    def __enter__(self) -> RunContext:
        _open_runs.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        if self in _open_runs:
            _open_runs.remove(self)

    def is_checkpoint_step(self, step: int | None = None) -> bool:
        """Whether `step` (default: the current step) is a checkpoint step.

        Args:
            step: A 0-based step index.

        Returns:
            True for steps k-1, 2k-1, ... and the last step, with k = `checkpoint_steps`;
            always False when `checkpoint_steps` is None.
        """
        step = self.step if step is None else step
        return is_checkpoint_step(step, self.checkpoint_steps, self.num_steps)

    def end_step(self) -> None:
        """Run the closures of the step that just ended whose values are on the host."""
        self.queue.run(block=False)

    def finish(self) -> None:
        """Run every closure still queued, waiting for the device if need be."""
        self.queue.run(block=True)
