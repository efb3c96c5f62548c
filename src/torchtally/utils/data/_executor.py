"""`DataExecutor`: the loop driver of a cstorch run.

Iterating it yields `num_steps` batches, starting the loader again whenever it runs out. Between
batches (after the loop body, i.e. after the user's step) it runs the closures that step queued,
counts the batch's samples for the profiler, and advances the step counter that checkpoint
closures and `summarize_scalar` consult. Leaving the loop early (`break`) still runs the closures
of the steps that ran.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, final

import torch

from torchtally._errors import check_int
from torchtally.runtime._backend import current_backend
from torchtally.runtime._run_context import RunContext, is_checkpoint_step
from torchtally.utils.data._profiler import Profiler

__all__ = ["DataExecutor", "current_executor"]

_current: DataExecutor | None = None


def current_executor() -> DataExecutor:
    """The `DataExecutor` created or iterated last, as `cstorch.current_executor()`.

    Returns:
        The executor.

    Raises:
        RuntimeError: No executor exists yet.

    Example:
        >>> from torchtally.utils.data import DataLoader
        >>> def input_fn(batch_size):
        ...     data = torch.utils.data.TensorDataset(torch.arange(8.0))
        ...     return torch.utils.data.DataLoader(data, batch_size=batch_size)
        >>> executor = DataExecutor(DataLoader(input_fn, batch_size=4), num_steps=2)
        >>> current_executor() is executor
        True
    """
    if _current is None:
        raise RuntimeError(
            "No DataExecutor exists yet: create one with "
            "`torchtally.utils.data.DataExecutor(dataloader, num_steps=...)`."
        )
    return _current


@final
class DataExecutor:
    """Drive a run: yield batches, run queued closures, track steps, checkpoints and rate.

    Args:
        dataloader: A `torchtally.utils.data.DataLoader` (or any iterable of batches).
        num_steps: How many steps to run. Default: one pass (the loader's length).
        checkpoint_steps: Checkpoint closures run on steps k-1, 2k-1, ... and on the last
            step (0-based) for `checkpoint_steps=k`. None: they never run.
        cs_config: A `CSConfig`; accepted for cstorch compatibility and ignored.
        writer: A `torch.utils.tensorboard.SummaryWriter` for `summarize_scalar`.
        profiler_activities: Which of "rate", "global_rate" to track. Default: both.
        activation_steps: How often (in steps) a Cerebras system sends activations back to
            the host; step closures see tensors on every step here, so this only sets
            `is_activation_step`, reduced to divide the checkpoint steps as cstorch does.
        listeners: cstorch's experimental tensor listeners (a sequence). They observe tensors
            inside the Cerebras appliance, so on CPU/GPU they are stored and never called.
        clock: The profiler's clock (seconds). Default: `time.perf_counter`.

    Example:
        >>> import torchtally as cstorch
        >>> from torchtally.utils.data import DataLoader
        >>> def input_fn(batch_size):
        ...     data = torch.utils.data.TensorDataset(torch.arange(64.0))
        ...     return torch.utils.data.DataLoader(data, batch_size=batch_size)
        >>> @cstorch.trace
        ... def training_step(batch):
        ...     return batch[0].mean()
        >>> @cstorch.step_closure
        ... def post_training_step(loss):
        ...     losses.append(float(loss))
        >>> @cstorch.checkpoint_closure
        ... def save_checkpoint(step):
        ...     saved.append(step)
        >>> losses, saved = [], []
        >>> executor = DataExecutor(DataLoader(input_fn, batch_size=8), num_steps=4,
        ...                         checkpoint_steps=2)
        >>> for step, batch in enumerate(executor):
        ...     loss = training_step(batch)
        ...     post_training_step(loss)  # a step closure: runs after this step
        ...     save_checkpoint(step)  # a checkpoint closure: runs on steps 1, 3 (k-1, 2k-1)
        >>> losses, saved
        ([3.5, 11.5, 19.5, 27.5], [1, 3])
        >>> executor.profiler.global_rate() > 0  # samples per second
        True
    """

    def __init__(
        self,
        dataloader: Iterable[Any],
        num_steps: int | None = None,
        checkpoint_steps: int | None = None,
        cs_config: Any = None,
        writer: Any = None,
        profiler_activities: Sequence[str] | None = None,
        *,
        activation_steps: int | None = None,
        listeners: Sequence[Any] | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        global _current
        if not isinstance(dataloader, Iterable):
            raise TypeError(
                "Argument `dataloader` must be an iterable of batches (a DataLoader). "
                f"Received: dataloader={type(dataloader).__name__}"
            )
        check_int("num_steps", num_steps, 1, allow_none=True)
        check_int("checkpoint_steps", checkpoint_steps, 1, allow_none=True)
        check_int("activation_steps", activation_steps, 1, allow_none=True)
        if listeners is not None and (
            isinstance(listeners, (str, bytes)) or not isinstance(listeners, Sequence)
        ):
            raise TypeError(
                "Argument `listeners` must be a sequence of tensor listeners or None. "
                f"Received: listeners={listeners!r}"
            )
        self.dataloader = dataloader
        self.num_steps = num_steps if num_steps is not None else _length(dataloader)
        self.checkpoint_steps = checkpoint_steps
        self.cs_config = cs_config
        self.writer = writer
        self.profiler = Profiler(profiler_activities, clock)
        self.activation_steps = _activation_steps(
            activation_steps, checkpoint_steps, self.num_steps
        )
        self.listeners = list(listeners or ())
        self._artifact_dir: Path | None = None
        self._step = -1
        _current = self

    @property
    def current_step(self) -> int:
        """The 0-based index of the step in progress (of the last step, after the loop)."""
        return self._step

    @property
    def artifact_dir(self) -> Path:
        """This run's directory, `<backend artifact_dir>/executors/<000001...>` as in cstorch.

        Numbered per backend when iteration starts, and created on first access.

        Raises:
            RuntimeError: The executor has not been iterated yet.
        """
        if self._artifact_dir is None:
            raise RuntimeError("DataExecutor must be iterated before having an artifact directory.")
        self._artifact_dir.mkdir(parents=True, exist_ok=True)
        return self._artifact_dir

    @property
    def iteration(self) -> int:
        """The 0-based index of the step in progress, as cstorch's `executor.iteration`."""
        return self._step

    @property
    def user_iteration(self) -> int:
        """The 1-based index of the step in progress."""
        return self._step + 1

    @property
    def is_activation_step(self) -> bool:
        """Whether the step in progress is one whose activations cstorch would fetch."""
        return (self._step + 1) % self.activation_steps == 0 or self.on_final_iteration

    @property
    def on_final_iteration(self) -> bool:
        """Whether the step in progress is the last one."""
        return self._step == self.num_steps - 1

    def is_checkpoint_step(self, step: int | None = None) -> bool:
        """Whether `step` (default: the current step) is a checkpoint step.

        Args:
            step: A 0-based step index.

        Returns:
            True on steps k-1, 2k-1, ... and the last, for `checkpoint_steps=k`.
        """
        step = self._step if step is None else step
        return is_checkpoint_step(step, self.checkpoint_steps, self.num_steps)

    def __len__(self) -> int:
        return self.num_steps

    def __iter__(self) -> Iterator[Any]:
        global _current
        _current = self
        self._artifact_dir = _next_artifact_dir()
        run = RunContext(self.num_steps, self.checkpoint_steps, self.writer)
        self._step = -1
        self.profiler.start()
        with run:
            try:
                for step, batch in zip(range(self.num_steps), self._batches()):
                    self._step = run.step = step
                    yield batch
                    run.end_step()
                    self.profiler.add_samples(_count_samples(batch, self.dataloader))
            except GeneratorExit:
                self._finish(run)  # the loop was left early: the steps that ran still count
                raise
            except BaseException:
                run.queue.clear()  # the closures of a failed step must not run
                raise
            self._finish(run)

    def _batches(self) -> Iterator[Any]:
        while True:  # start the loader again each time it runs out
            empty = True
            for batch in self.dataloader:
                empty = False
                yield batch
            if empty:
                raise ValueError(
                    "Argument `dataloader` yielded no batches; it needs at least one. "
                    f"Received: dataloader={type(self.dataloader).__name__}"
                )

    def _finish(self, run: RunContext) -> None:
        run.finish()
        if self.writer is not None and hasattr(self.writer, "flush"):
            self.writer.flush()


def _next_artifact_dir() -> Path:
    owner = current_backend()
    if owner is None:
        return Path("torchtally_logs") / "executors" / "000001"
    owner.executor_counter += 1
    return Path(owner.artifact_dir) / "executors" / f"{owner.executor_counter:06d}"


def _activation_steps(requested: int | None, checkpoint_steps: int | None, num_steps: int) -> int:
    """cstorch's rule: at most `num_steps`, then the gcd with every checkpoint step number."""
    steps = min(requested or 1, num_steps)
    if checkpoint_steps:
        marks = list(range(min(checkpoint_steps, num_steps), num_steps + 1, checkpoint_steps))
        steps = math.gcd(steps, *marks, num_steps)
    return steps


def _length(dataloader: Iterable[Any]) -> int:
    try:
        length = len(dataloader)  # type: ignore[arg-type]
    except TypeError as error:
        raise ValueError(
            "Argument `num_steps` is required when the dataloader has no length. "
            "Received: num_steps=None"
        ) from error
    if length < 1:
        raise ValueError(f"Argument `dataloader` is empty (length {length}); it needs a batch.")
    return length


def _count_samples(batch: Any, dataloader: Any) -> int:
    """The batch's sample count: the leading size of its first tensor, else the batch size."""
    tensor = _first_tensor(batch)
    if tensor is not None and tensor.dim() > 0:
        return int(tensor.shape[0])
    size = getattr(dataloader, "batch_size", None)
    return size if isinstance(size, int) else 1


def _first_tensor(value: Any) -> torch.Tensor | None:
    if isinstance(value, torch.Tensor):
        return value
    items: Iterable[Any] = ()
    if isinstance(value, Mapping):
        items = value.values()
    elif isinstance(value, (list, tuple)):
        items = value
    for item in items:
        found = _first_tensor(item)
        if found is not None:
            return found
    return None
