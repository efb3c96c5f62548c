"""`StepLoop`: the traced steps of a learner and the loop that runs one split for one epoch.

The train step is one traced function: the step function, the metric updates (through their
adaptors), `optimizer_step` and the scheduler step; the eval step runs the step function under
`torch.no_grad()` and updates the metrics. Each comes in two traced variants, with and without
logging; the logging one also computes every metric's running value and passes the tensors to
a step closure, which builds the `MetricRecord`s once the step is over. The host loop picks
the variant (every `log_every` steps and at the last step of the epoch), so no step branches
on a value. A `DataExecutor` drives each split's epoch; its profiler gives the throughput.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator, Iterable, Mapping
from typing import Any, cast, final

import torch

from torchtally.amp import GradScaler, optimizer_step
from torchtally.learn._events import MetricRecord, Progress
from torchtally.learn._learner_metrics import SplitMetrics
from torchtally.learn._learner_observers import Broadcast
from torchtally.learn._learner_records import to_records
from torchtally.learn._learner_state import Position, Replay, capture_rng, loader_generator
from torchtally.learn._learner_steps import StepFn, loss_of, to_device
from torchtally.runtime import CompiledModel, step_closure, trace
from torchtally.utils.data import DataExecutor

__all__ = ["StepLoop", "loader_length"]


@final
class StepLoop:
    """Run splits of a learner, one epoch at a time, and count their steps.

    Args:
        compiled: The compiled model.
        optimizer: The optimizer.
        train_fn: The train step function `(model, batch) -> output`.
        eval_fn: The eval step function.
        metrics: Split -> its metrics.
        broadcast: The observers.
        stop: Set to stop after the current step.
        lr_scheduler: Stepped after every optimizer step, or None.
        grad_scaler: For `optimizer_step`, or None.
        max_gradient_norm: For `optimizer_step`, or None.
        log_every: Log the running values every this many steps (and at each epoch's end).
        num_epochs: The run's length, for `Progress`.

    Example:
        >>> loop = StepLoop(compiled, opt, classification_step, classification_step, metrics,
        ...                 Broadcast([]), threading.Event())
        >>> loop.run_split("train", loader, epoch=1, index=0)
        True
    """

    def __init__(
        self,
        compiled: CompiledModel,
        optimizer: torch.optim.Optimizer,
        train_fn: StepFn,
        eval_fn: StepFn,
        metrics: Mapping[str, SplitMetrics],
        broadcast: Broadcast,
        stop: threading.Event,
        *,
        lr_scheduler: Any = None,
        grad_scaler: GradScaler | None = None,
        max_gradient_norm: float | None = None,
        log_every: int = 10,
        num_epochs: int = 1,
    ) -> None:
        self.compiled = compiled
        self.optimizer = optimizer
        self.train_fn, self.eval_fn = train_fn, eval_fn
        self.metrics = metrics
        self.broadcast = broadcast
        self.stop = stop
        self.lr_scheduler = lr_scheduler
        self.grad_scaler = grad_scaler
        self.max_gradient_norm = max_gradient_norm
        self.log_every = log_every
        self.num_epochs = num_epochs
        #: Optimizer steps so far.
        self.global_step = 0
        #: Evaluation steps so far, per split.
        self.eval_steps: dict[str, int] = {"valid": 0, "test": 0}
        #: Every record the learner logged (machine samples excluded).
        self.history: list[MetricRecord] = []
        #: The last completed step: (epoch, split index, step within the split).
        self.cursor = Position(1, 0, 0)
        #: `capture_rng` at the start of the split in progress (for a mid-split checkpoint).
        self.split_rng: dict[str, Any] | None = None
        self.epoch = 1
        self._publish = step_closure(self._publish_values)
        compiled_steps = compiled.backend.compile_options is not None
        self._emit = torch.compiler.disable(self._emit_now) if compiled_steps else self._emit_now
        self._steps = {
            split: (self._traced(split, log=False), self._traced(split, log=True))
            for split in metrics
        }

    def counter(self, split: str) -> int:
        """The step count records of `split` are stamped with (global or evaluation steps)."""
        return self.global_step if split == "train" else self.eval_steps[split]

    def run_split(
        self,
        split: str,
        loader: Iterable[Any],
        epoch: int,
        index: int,
        start_step: int = 0,
        resume_rng: tuple[dict[str, Any], dict[str, Any]] | None = None,
        collect: Callable[[Any], None] | None = None,
    ) -> bool:
        """Run one epoch of `split` (the rest of it, when resuming part-way).

        Args:
            split: "train", "valid" or "test".
            loader: The split's loader (it must have a length).
            epoch: The 1-based epoch.
            index: The split's index within the epoch (for `cursor`).
            start_step: Steps of this epoch that already ran (resuming part-way).
            resume_rng: `(split start, stop)` random states when resuming part-way.
            collect: Called with every step's output, outside the step (curves).

        Returns:
            True when the epoch of the split completed; False when a stop cut it short.
        """
        total = loader_length(loader, split)
        metrics = self.metrics[split]
        self.epoch = epoch
        self.compiled.module.train(split == "train")
        source: Iterable[Any] = loader
        if resume_rng is None or start_step == 0:
            metrics.reset()
            self.split_rng = capture_rng(loader_generator(loader))
        else:
            self.split_rng = resume_rng[0]
            source = Replay(loader, start_step, resume_rng[0], resume_rng[1])
        if start_step < total and not self._run_steps(
            split, source, epoch, index, start_step, total, collect
        ):
            return False
        metrics.check_errors()
        self.broadcast.on_epoch_end(split, epoch)
        return True

    def _run_steps(
        self,
        split: str,
        source: Iterable[Any],
        epoch: int,
        index: int,
        step: int,
        total: int,
        collect: Callable[[Any], None] | None,
    ) -> bool:
        executor = DataExecutor(source, num_steps=total - step)
        batches = cast(Generator[Any, None, None], iter(executor))
        device = self.compiled.device
        try:
            for batch in batches:
                step += 1
                output = self._one_step(split, to_device(batch, device), step, total)
                self.cursor = Position(epoch, index, step)
                if collect is not None:
                    collect(output)
                profiler = executor.profiler
                rate = profiler.rate() if profiler.total_samples else None
                self.broadcast.on_progress(
                    Progress(split, epoch, self.num_epochs, step, total, self.global_step, rate)
                )
                if self.stop.is_set() and step < total:
                    return False
        finally:
            batches.close()  # runs the closures of the steps that ran
        return True

    def _one_step(self, split: str, batch: Any, step: int, total: int) -> Any:
        log = step % self.log_every == 0 or step == total
        self._advance(split, 1)
        try:
            return self._steps[split][int(log)](batch)
        except BaseException:
            self._advance(split, -1)  # the step did not complete
            raise

    def _advance(self, split: str, by: int) -> None:
        if split == "train":
            self.global_step += by
        else:
            self.eval_steps[split] += by

    def _traced(self, split: str, *, log: bool) -> Callable[[Any], Any]:
        def step(batch: Any) -> Any:
            return self._step_body(split, batch, log)

        step.__name__ = step.__qualname__ = f"{split}_step{'_logged' if log else ''}"
        return trace(step)

    def _step_body(self, split: str, batch: Any, log: bool) -> Any:
        metrics = self.metrics[split]
        if split == "train":
            output = self.train_fn(self.compiled, batch)
            loss = loss_of(output)
            with torch.no_grad():
                metrics.update(output, self.optimizer)  # before the step: the rate it uses
            optimizer_step(loss, self.optimizer, self.grad_scaler, self.max_gradient_norm)
            if self.lr_scheduler is not None:
                self.lr_scheduler.step()
        else:
            with torch.no_grad():
                output = self.eval_fn(self.compiled, batch)
                metrics.update(output, self.optimizer)
        if log:
            self._emit(split, metrics.compute())
        return output

    def _emit_now(self, split: str, values: dict[str, Any]) -> None:
        # Host bookkeeping (a graph break in a compiled step): stamp the values now, read
        # them in the closure once the step is over.
        self._publish(split, self.epoch, self.counter(split), values)

    def _publish_values(self, split: str, epoch: int, step: int, values: dict[str, Any]) -> None:
        records = to_records(split, epoch, step, values, self.metrics[split].units)
        self.history.extend(records)
        self.broadcast.on_records(records)


def loader_length(loader: Iterable[Any], split: str) -> int:
    """The number of batches of a split's loader.

    Args:
        loader: The loader.
        split: Its split (for the error message).

    Returns:
        `len(loader)` (>= 1).

    Raises:
        TypeError: The loader has no length.
        ValueError: It is empty.
    """
    try:
        length = len(loader)  # type: ignore[arg-type]
    except TypeError as error:
        raise TypeError(
            f"Argument `{split}_loader` must have a length (epochs are passes over it). "
            f"Received: a {type(loader).__name__} without __len__"
        ) from error
    if length < 1:
        raise ValueError(f"Argument `{split}_loader` must yield at least one batch. Received: 0")
    return length
