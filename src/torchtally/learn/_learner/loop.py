"""`StepLoop`: the traced steps of a learner and the loop that runs one split for one epoch.

The train step is one traced function: the step function, the metric updates (through their
adaptors), `optimizer_step` and the scheduler step; the eval step runs the step function under
`torch.no_grad()` and updates the metrics. Each comes in two traced variants, with and without
logging; the logging one also computes every metric's running value and passes the tensors to
a step closure, which builds the `MetricRecord`s once the step is over. The host loop picks
the variant (every `log_every` steps and at the last step of the epoch), so no step branches
on a value. A `DataExecutor` drives each split's epoch; its profiler gives the throughput.

Every train step also hands `isfinite(loss)` to a step closure, which runs before the next
step begins: a non-finite loss is reported at the step it happened (`on_nan`), never found at
the epoch's end. With `on_nan="skip"` the step's optimizer update and train-metric updates are
undone in the graph with `torch.where` (no host read), at the price of a copy of the parameters,
optimizer state and metric states per step. Gradient accumulation is one more host choice of
variant: backward only, or backward and the optimizer step (every `accumulation_steps` steps
and at the epoch's end).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Generator, Iterable, Mapping
from typing import Any, cast, final

import torch

from torchtally._records import MetricRecord, Progress
from torchtally.amp import GradScaler, autocast, optimizer_step
from torchtally.amp._conditional import step_where
from torchtally.learn._learner.metrics import SplitMetrics
from torchtally.learn._learner.observers import Broadcast
from torchtally.learn._learner.records import to_records
from torchtally.learn._learner.state import Position, Replay, capture_rng, loader_generator
from torchtally.learn._learner.steps import StepFn, loss_of, to_device
from torchtally.runtime import CompiledModel, step_closure, trace
from torchtally.utils.data import DataExecutor

__all__ = ["NON_FINITE_POLICIES", "NonFiniteLossError", "StepLoop", "loader_length"]

_log = logging.getLogger("torchtally.learn")

#: What a learner does when a train step's loss is NaN or infinite.
NON_FINITE_POLICIES = ("raise", "stop", "skip")


class NonFiniteLossError(FloatingPointError):
    """A train step's loss was NaN or infinite (raised at that step with `on_nan="raise"`).

    Attributes:
        split: The split ("train").
        epoch: The 1-based epoch.
        step: The 1-based step within the epoch.
        global_step: The global step the records of that step carry.
        value: The loss value.
    """

    def __init__(self, split: str, epoch: int, step: int, global_step: int, value: float) -> None:
        self.split, self.epoch, self.step = split, epoch, step
        self.global_step, self.value = global_step, value
        super().__init__(
            f"The loss is not finite ({value}) at {split} step {global_step} (epoch {epoch}, "
            f"step {step} of the epoch); training stopped there. Pass `on_nan='skip'` to skip "
            "such steps' updates, or `on_nan='stop'` to end the run without an error."
        )


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
        on_nan: A non-finite train loss: "raise" `NonFiniteLossError` at its step, "stop" the
            run there (reported in `non_finite`), or "skip" the step's updates (logged).
        accumulation_steps: Step the optimizer every this many batches (and at each epoch's
            end), on the gradients of the mean loss over them.
        mixed_precision: Run the step functions under `torchtally.amp.autocast`.

    Example:
        >>> from torchtally.learn._learner.metrics import SplitMetrics
        >>> from torchtally.learn._learner.steps import classification_step
        >>> from torchtally.metrics import MeanMetric
        >>> from torchtally.optim import SGD
        >>> from torchtally.runtime import compile as compile_model
        >>> model = torch.nn.Linear(2, 2)
        >>> compiled = compile_model(model, "CPU")
        >>> metrics = {"train": SplitMetrics("train", [MeanMetric("loss")], "cpu")}
        >>> loop = StepLoop(compiled, SGD(model.parameters(), lr=0.1), classification_step,
        ...                 classification_step, metrics, Broadcast([]), threading.Event())
        >>> batches = [(torch.tensor([[1.0, 0.0]]), torch.tensor([0]))] * 3
        >>> loop.run_split("train", batches, epoch=1, index=0)  # True: the epoch ran to its end
        True
        >>> loop.global_step
        3
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
        on_nan: str = "raise",
        accumulation_steps: int = 1,
        mixed_precision: bool = False,
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
        self.on_nan = on_nan
        self.accumulation_steps = accumulation_steps
        self.mixed_precision = mixed_precision
        #: The first non-finite loss of the run: (epoch, step in the epoch, global step, value).
        self.non_finite: tuple[int, int, int, float] | None = None
        #: Global steps whose updates were skipped for a non-finite loss (`on_nan="skip"`).
        self.skipped_steps: list[int] = []
        self._pending_nan: tuple[int, int, int, float] | None = None
        self._step_in_epoch = 0
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
        self._check_loss = step_closure(self._loss_checked)
        compiled_steps = compiled.backend.compile_options is not None
        self._emit = torch.compiler.disable(self._emit_now) if compiled_steps else self._emit_now
        self._report_loss = (
            torch.compiler.disable(self._report_loss_now)
            if compiled_steps
            else self._report_loss_now
        )
        self._steps = {
            (split, log, apply): self._traced(split, log=log, apply=apply)
            for split in metrics
            for log in (False, True)
            for apply in ((False, True) if split == "train" else (True,))
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
            for batch in batches:  # the closures of the step before ran as this batch came
                if self._non_finite_found():
                    return False
                step += 1
                self._step_in_epoch = step
                output = self._one_step(split, to_device(batch, device), step, total)
                self.cursor = Position(epoch, index, step)
                if collect is not None:
                    collect(output)
                profiler = executor.profiler
                rate = profiler.rate() if profiler.total_samples else None
                self.broadcast.on_progress(
                    Progress(
                        split,
                        epoch,
                        self.num_epochs,
                        step,
                        total,
                        self.global_step,
                        rate,
                        self.counter(split),
                    )
                )
                # A stop waits for the accumulated gradients to be applied: they are not saved.
                boundary = split != "train" or step % self.accumulation_steps == 0
                if self.stop.is_set() and step < total and boundary:
                    return False
        finally:
            batches.close()  # runs the closures of the steps that ran
        return not self._non_finite_found()

    def _non_finite_found(self) -> bool:
        """Act on a non-finite loss the last step's closure reported: raise, or stop."""
        found, self._pending_nan = self._pending_nan, None
        if found is None:
            return False
        if self.non_finite is None:
            self.non_finite = found
        epoch, step, global_step, value = found
        if self.on_nan == "raise":
            raise NonFiniteLossError("train", epoch, step, global_step, value)
        _log.error(
            "The loss is not finite (%s) at train step %d (epoch %d, step %d of the epoch); "
            "stopping the run.",
            value,
            global_step,
            epoch,
            step,
        )
        self.stop.set()
        return True

    def _one_step(self, split: str, batch: Any, step: int, total: int) -> Any:
        log = step % self.log_every == 0 or step == total
        apply = split != "train" or step % self.accumulation_steps == 0 or step == total
        self._advance(split, 1)
        try:
            return self._steps[(split, log, apply)](batch)
        except BaseException:
            self._advance(split, -1)  # the step did not complete
            raise

    def _advance(self, split: str, by: int) -> None:
        if split == "train":
            self.global_step += by
        else:
            self.eval_steps[split] += by

    def _traced(self, split: str, *, log: bool, apply: bool) -> Callable[[Any], Any]:
        def step(batch: Any) -> Any:
            return self._step_body(split, batch, log, apply)

        name = f"{split}_step{'_logged' if log else ''}{'' if apply else '_accumulate'}"
        step.__name__ = step.__qualname__ = name
        return trace(step)

    def _forward(self, fn: StepFn, batch: Any) -> Any:
        device_type = self.compiled.device.type
        with (
            autocast(device_type=device_type) if self.mixed_precision else contextlib.nullcontext()
        ):
            return fn(self.compiled, batch)

    def _step_body(self, split: str, batch: Any, log: bool, apply: bool = True) -> Any:
        metrics = self.metrics[split]
        if split == "train":
            output = self._forward(self.train_fn, batch)
            loss = loss_of(output)
            finite = torch.isfinite(loss.detach()).all()
            self._report_loss(finite, loss.detach().float().sum())
            with torch.no_grad():
                if self.on_nan == "skip":
                    with _undone_unless(finite, metrics):
                        metrics.update(output, self.optimizer)
                else:
                    metrics.update(output, self.optimizer)  # before the step: the rate it uses
            self._optimize(loss, finite, apply)
        else:
            with torch.no_grad():
                output = self._forward(self.eval_fn, batch)
                metrics.update(output, self.optimizer)
        if log:
            self._emit(split, metrics.compute())
        return output

    def _optimize(self, loss: torch.Tensor, finite: torch.Tensor, apply: bool) -> None:
        k = self.accumulation_steps
        scaled = loss / k if k > 1 else loss
        if self.on_nan == "skip":
            # NaN gradients would poison the accumulated sum: zero this step's loss instead.
            scaled = torch.where(finite, scaled, torch.zeros_like(scaled))
        if not apply:
            scaler = self.grad_scaler
            (scaler.scale(scaled) if scaler is not None else scaled).backward()
            return
        optimizer: Any = self.optimizer
        if self.on_nan == "skip":
            optimizer = _SkipUnless(finite, self.optimizer)
        optimizer_step(scaled, optimizer, self.grad_scaler, self.max_gradient_norm)
        if self.lr_scheduler is not None:
            self.lr_scheduler.step()

    def _report_loss_now(self, finite: torch.Tensor, value: torch.Tensor) -> None:
        # Host bookkeeping, as `_emit_now`: stamp the step now, read the flag in the closure.
        self._check_loss(self.epoch, self._step_in_epoch, self.global_step, finite, value)

    def _loss_checked(
        self, epoch: int, step: int, global_step: int, finite: Any, value: Any
    ) -> None:
        if bool(finite):
            return
        found = (epoch, step, global_step, float(value))
        if self.on_nan == "skip":
            self.skipped_steps.append(global_step)
            if self.non_finite is None:
                self.non_finite = found
            _log.warning(
                "The loss is not finite (%s) at train step %d (epoch %d); its update was skipped.",
                found[3],
                global_step,
                epoch,
            )
        elif self._pending_nan is None:
            self._pending_nan = found

    def _emit_now(self, split: str, values: dict[str, Any]) -> None:
        # Host bookkeeping (a graph break in a compiled step): stamp the values now, read
        # them in the closure once the step is over.
        self._publish(split, self.epoch, self.counter(split), values)

    def _publish_values(self, split: str, epoch: int, step: int, values: dict[str, Any]) -> None:
        records = to_records(split, epoch, step, values, self.metrics[split].units)
        self.history.extend(records)
        self.broadcast.on_records(records)


@contextlib.contextmanager
def _undone_unless(condition: torch.Tensor, metrics: SplitMetrics) -> Any:
    """Within the block, metric updates count only where `condition` holds (tensor ops)."""
    saved = [
        (tensor, tensor.detach().clone())
        for metric in metrics.metrics.values()
        for _, tensor, _ in metric.states()
    ]
    yield
    for metric in metrics.metrics.values():
        metric.flush()  # a batch it held back (coalescing) must be in the state undone below
    for tensor, old in saved:
        tensor.copy_(torch.where(condition, tensor, old))


@final
class _SkipUnless:
    """An optimizer whose `step` takes effect only where `condition` holds (no host read)."""

    def __init__(self, condition: torch.Tensor, optimizer: torch.optim.Optimizer) -> None:
        self.condition = condition
        self.optimizer = optimizer
        self.param_groups = optimizer.param_groups
        self.state = optimizer.state

    def step(self, *args: Any, **kwargs: Any) -> Any:
        return step_where(self.condition, self.optimizer, *args, **kwargs)

    def zero_grad(self, set_to_none: bool = True) -> None:
        self.optimizer.zero_grad(set_to_none=set_to_none)


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
