"""`Learner`: the Burn-style training loop, built on the cstorch runtime.

Each step is one `cstorch.trace`d function (see `loop`): the step function, backward
and optimizer step, the scheduler step and every metric's update through its adaptor; logged
values reach the observers through a step closure, never through a read in the step.
Checkpoints (`cstorch.save`, HDF5) hold the model, optimizer, scheduler, grad scaler, metric
states, step counters and random state, so a resumed run logs exactly what an uninterrupted run
would have, whether it stopped at an epoch boundary or part-way through a split.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, final

import torch
from torch import nn

from torchtally._errors import check_int
from torchtally._records import CurveData, MetricRecord, Observer, RunInfo, StatisticKey
from torchtally.amp import GradScaler
from torchtally.learn._learner.checkpoint import Restored, TrainingState
from torchtally.learn._learner.curves import write_curve_data
from torchtally.learn._learner.families import TestCurves
from torchtally.learn._learner.loop import NON_FINITE_POLICIES, StepLoop
from torchtally.learn._learner.metrics import MetricSpec, SplitMetrics, split_metrics
from torchtally.learn._learner.observers import Broadcast
from torchtally.learn._learner.retention import prune_checkpoints, remove_orphans
from torchtally.learn._learner.run import RunScope
from torchtally.learn._learner.select import (
    EarlyStopping,
    MetricTracker,
    higher_is_better,
    parse_monitor,
)
from torchtally.learn._learner.state import (
    Position,
    latest_checkpoint,
    loader_generator,
    restore_rng,
)
from torchtally.learn._learner.steps import StepFn, classification_step
from torchtally.runtime import Backend, CompiledModel
from torchtally.runtime import compile as compile_model

__all__ = ["Learner"]

_log = logging.getLogger("torchtally.learn")

_EPOCH_SPLITS = ("train", "valid")


@final
class Learner:
    """Train, validate and test a model, logging metrics to observers and checkpointing.

    Args:
        model: The model (an `nn.Module`, compiled here with `cstorch.compile`) or a
            `CompiledModel`.
        optimizer: Its optimizer. Prefer `torchtally.optim` ones: torch's Adam reads its step
            count on the host, which a traced step refuses.
        train_step: `(model, batch) -> output` (a `ClassificationOutput`, ...). Default:
            `(inputs, labels)` batches, cross-entropy loss.
        eval_step: The same for validation and test (run under no_grad). Default: train_step.
        lr_scheduler: Stepped after every optimizer step.
        metrics: `{"train": [...], "valid": [...], "test": [...]}`; each entry a metric or a
            `(metric, adaptor)` pair. Default: the loss (`MeanMetric("loss")`), plus the
            learning rate for train; a missing "test" copies "valid".
        num_epochs: Epochs `fit` runs in all (a resumed run continues to this many).
        logdir: Where checkpoints go (`logdir/checkpoints/epoch-<n>.h5`) and curves are
            written. None: no checkpoints.
        checkpoint_every: Save after every this many epochs (and after the last, and on a
            stop). None: only on a stop and after the last epoch.
        keep_checkpoints: Keep only this many newest checkpoints in `logdir/checkpoints`,
            counting those of earlier runs (None: all). Temp files left by a save that was
            killed are removed at the next save.
        backend: A `Backend` or backend type for `cstorch.compile` (None: the current one).
        observers: Receivers of the run's events: `Observer`s (loggers, dashboard, summary
            table), or objects with some of its event methods. Each is offered
            `request_stop` (`Observer.bind_stop`).
        log_every: Log the running metric values every this many steps (and at epoch ends).
        grad_scaler: A `torchtally.amp.GradScaler` for mixed precision, or None.
        max_gradient_norm: Clip gradients to this global norm, or None.
        monitor: A `SystemMonitor` (anything with add_observer, set_epoch, start, stop); it
            is given the observers, started with a run if not running, and told the epoch.
        class_names: Class display names for curves.
        handle_sigint: Turn the first Ctrl-C into `request_stop()` during a run.
        on_nan: What a NaN or infinite train loss does, found at the step it happened:
            "raise" (default) `NonFiniteLossError` there; "stop" the run there like a stop
            request, without checkpointing the non-finite state (see `non_finite`); "skip"
            that step's optimizer and train-metric updates (undone in the graph; costs a copy
            of the parameters, optimizer and metric states per step) and log a warning.
        accumulation_steps: Gradient accumulation: step the optimizer every this many train
            batches (and at each epoch's end) on the gradients of their mean loss. The
            scheduler steps with the optimizer; `global_step` still counts batches. A stop
            waits for the accumulated gradients to be applied.
        mixed_precision: Run the step functions under `torchtally.amp.autocast` (the half
            dtype of `torchtally.amp.use_bfloat16`); pair float16 with a `grad_scaler`.
        early_stopping: An `EarlyStopping` on a monitored metric's epoch values: the run
            stops (with a checkpoint) once it has not improved for `patience` epochs.
        keep_best: Keep the checkpoints of this many best epochs by `best_by` (each best
            epoch is checkpointed), besides the newest `keep_checkpoints` (default 1 then).
        best_by: "split/name" of the metric ranking the epochs for `keep_best` (default:
            the early-stopping metric, else "valid/loss"); its class's `higher_is_better`
            says which way is better ("loss" means lower).

    Example:
        >>> import torchtally as cstorch
        >>> from torchtally.learn import FileLogger
        >>> from torchtally.metrics import AccuracyMetric, MeanMetric
        >>> _ = torch.manual_seed(0)
        >>> x = torch.randn(64, 2)
        >>> batches = [(x[i : i + 16], (x[i : i + 16, 0] > 0).long()) for i in range(0, 64, 16)]
        >>> model = torch.nn.Linear(2, 2)
        >>> learner = Learner(model, cstorch.optim.SGD(model.parameters(), lr=0.5),
        ...                   metrics={"train": [MeanMetric("loss"), AccuracyMetric("accuracy")],
        ...                            "valid": [MeanMetric("loss"), AccuracyMetric("accuracy")]},
        ...                   num_epochs=2, logdir="runs/a", observers=[FileLogger("runs/a")])
        >>> learner.fit(batches, batches)
        Linear(in_features=2, out_features=2, bias=True)
        >>> {name: round(value, 2) for name, value in learner.test(batches, curves=True).items()}
        {'loss': 0.31, 'accuracy': 1.0}
        >>> sorted(path.name for path in Path("runs/a/checkpoints").glob("*.h5"))
        ['epoch-1.h5', 'epoch-2.h5']
    """

    def __init__(
        self,
        model: nn.Module | CompiledModel,
        optimizer: torch.optim.Optimizer,
        *,
        train_step: StepFn | None = None,
        eval_step: StepFn | None = None,
        lr_scheduler: Any = None,
        metrics: Mapping[str, Sequence[MetricSpec]] | None = None,
        num_epochs: int = 1,
        logdir: str | os.PathLike[str] | None = None,
        checkpoint_every: int | None = 1,
        keep_checkpoints: int | None = None,
        backend: Backend | str | None = None,
        observers: Sequence[Observer | object] = (),
        log_every: int = 10,
        grad_scaler: GradScaler | None = None,
        max_gradient_norm: float | None = None,
        monitor: Any = None,
        class_names: Sequence[str] | None = None,
        handle_sigint: bool = True,
        on_nan: str = "raise",
        accumulation_steps: int = 1,
        mixed_precision: bool = False,
        early_stopping: EarlyStopping | None = None,
        keep_best: int | None = None,
        best_by: str | None = None,
    ) -> None:
        _check_args(model, optimizer, train_step, eval_step)
        if on_nan not in NON_FINITE_POLICIES:
            raise ValueError(
                f"Argument `on_nan` must be one of {', '.join(map(repr, NON_FINITE_POLICIES))}. "
                f"Received: on_nan={on_nan!r}"
            )
        check_int("accumulation_steps", accumulation_steps, 1)
        check_int("keep_best", keep_best, 1, allow_none=True)
        if early_stopping is not None and not isinstance(early_stopping, EarlyStopping):
            raise TypeError(
                "Argument `early_stopping` must be an EarlyStopping or None. "
                f"Received: early_stopping={early_stopping!r}"
            )
        if keep_best is not None and keep_checkpoints is None:
            keep_checkpoints = 1  # the best ones, plus the last
        if not isinstance(mixed_precision, bool):
            raise TypeError(
                f"Argument `mixed_precision` must be a bool. Received: {mixed_precision!r}"
            )
        check_int("num_epochs", num_epochs, 1)
        check_int("log_every", log_every, 1)
        check_int("checkpoint_every", checkpoint_every, 1, allow_none=True)
        check_int("keep_checkpoints", keep_checkpoints, 1, allow_none=True)
        compiled = model if isinstance(model, CompiledModel) else compile_model(model, backend)
        self.model: nn.Module = compiled.module
        self.optimizer = optimizer
        self.lr_scheduler = lr_scheduler
        self.grad_scaler = grad_scaler
        self.num_epochs = num_epochs
        self.logdir = None if logdir is None else Path(logdir)
        self.checkpoint_every = checkpoint_every
        self.keep_checkpoints = keep_checkpoints
        self.class_names = None if class_names is None else list(class_names)
        self.monitor = monitor
        #: The curves of the last `test(..., curves=True)`.
        self.curves: CurveData | None = None
        #: The checkpoint last written or loaded.
        self.last_checkpoint: Path | None = None
        self._broadcast = Broadcast(observers)
        self._broadcast.bind_stop(self.request_stop)  # `q` on a dashboard stops this learner
        if monitor is not None:
            monitor.add_observer(self._broadcast)
        self._metrics = {
            split: SplitMetrics(split, specs, compiled.device)
            for split, specs in split_metrics(metrics).items()
        }
        self._stop = threading.Event()
        self._position = Position(1, 0, 0)
        self._restored: Restored | None = None
        train_fn = train_step if train_step is not None else classification_step
        self._loop = StepLoop(
            compiled,
            optimizer,
            train_fn,
            eval_step if eval_step is not None else train_fn,
            self._metrics,
            self._broadcast,
            self._stop,
            lr_scheduler=lr_scheduler,
            grad_scaler=grad_scaler,
            max_gradient_norm=max_gradient_norm,
            log_every=log_every,
            num_epochs=num_epochs,
            on_nan=on_nan,
            accumulation_steps=accumulation_steps,
            mixed_precision=mixed_precision,
        )
        self._state = TrainingState(self.model, optimizer, lr_scheduler, grad_scaler, self._loop)
        self.early_stopping = early_stopping
        self.keep_best = keep_best
        self._tracker, self._monitored = self._make_tracker(early_stopping, keep_best, best_by)
        #: The epoch an early stop ended the last `fit` at, or None.
        self.stopped_at_epoch: int | None = None
        self._scope = RunScope(self._broadcast, self._stop, monitor, handle_sigint)

    # ------------------------------------------------------------------------- state

    @property
    def history(self) -> list[MetricRecord]:
        """Every record this learner logged, in order (machine samples excluded)."""
        return self._loop.history

    @property
    def global_step(self) -> int:
        """Optimizer steps so far (restored by a resume)."""
        return self._loop.global_step

    @property
    def epochs_done(self) -> int:
        """Complete epochs so far."""
        return self._position.epoch - 1

    @property
    def non_finite(self) -> tuple[int, int, int, float] | None:
        """The first non-finite train loss of the last `fit`, as (epoch, step in the epoch,
        global step, value), or None."""
        return self._loop.non_finite

    @property
    def skipped_steps(self) -> list[int]:
        """Global steps whose updates `on_nan="skip"` skipped in the last `fit`."""
        return list(self._loop.skipped_steps)

    @property
    def best_checkpoints(self) -> list[tuple[float, int, Path]]:
        """The kept best epochs, best first: (value of `best_by`, epoch, checkpoint path).

        Example:
            >>> from torchtally.optim import SGD
            >>> model = torch.nn.Linear(2, 2)
            >>> learner = Learner(model, SGD(model.parameters(), lr=0.5), num_epochs=3,
            ...                   logdir="runs/best", keep_best=1)
            >>> batches = [(torch.tensor([[1.0, 0.0], [0.0, 1.0]]), torch.tensor([0, 1]))]
            >>> _ = learner.fit(batches, batches)
            >>> value, epoch, path = learner.best_checkpoints[0]  # lowest valid/loss
            >>> epoch, path
            (3, PosixPath('runs/best/checkpoints/epoch-3.h5'))
        """
        folder = self.checkpoint_dir
        if self._tracker is None or folder is None or not self.keep_best:
            return []
        return [(value, epoch, folder / name) for value, epoch, name in self._tracker.ranking]

    @property
    def metrics(self) -> dict[str, SplitMetrics]:
        """Split -> its metrics."""
        return self._metrics

    @property
    def observers(self) -> tuple[Observer | object, ...]:
        """The observers (give them to a system monitor to route its samples alike)."""
        return self._broadcast.observers

    @property
    def checkpoint_dir(self) -> Path | None:
        """`logdir/checkpoints`, or None without a logdir."""
        return None if self.logdir is None else self.logdir / "checkpoints"

    @property
    def stop_requested(self) -> bool:
        """Whether `request_stop` was called during the current run."""
        return self._stop.is_set()

    def request_stop(self) -> None:
        """Stop after the current step: save a checkpoint and end the run (thread-safe).

        Example:
            >>> from torchtally.optim import SGD
            >>> model = torch.nn.Linear(2, 2)
            >>> learner = Learner(model, SGD(model.parameters(), lr=0.5), num_epochs=5)
            >>> learner.request_stop()  # e.g. from a timer thread: the run stops at once
            >>> learner.stop_requested
            True
        """
        self._stop.set()

    # ------------------------------------------------------------------------- runs

    def fit(
        self,
        train_loader: Iterable[Any],
        valid_loader: Iterable[Any] | None = None,
        *,
        resume: bool | str | os.PathLike[str] = False,
    ) -> nn.Module:
        """Train for the remaining epochs, validating after each.

        Args:
            train_loader: Training batches (with a length). Its shuffle may draw from torch's
                global generator or its own `generator`: both are checkpointed.
            valid_loader: Validation batches, or None.
            resume: True: continue from the latest checkpoint in `logdir` (start afresh if
                there is none); a path: continue from that checkpoint.

        Returns:
            The trained model.

        Example:
            >>> from torchtally.optim import SGD
            >>> model = torch.nn.Linear(2, 2)
            >>> batches = [(torch.tensor([[1.0, 0.0], [0.0, 1.0]]), torch.tensor([0, 1]))]
            >>> learner = Learner(model, SGD(model.parameters(), lr=0.5), num_epochs=1,
            ...                   logdir="runs/fit")
            >>> _ = learner.fit(batches, batches)
            >>> learner = Learner(model, SGD(model.parameters(), lr=0.5), num_epochs=2,
            ...                   logdir="runs/fit")
            >>> _ = learner.fit(batches, batches, resume=True)  # continues at epoch 2
            >>> sorted(path.name for path in Path("runs/fit/checkpoints").glob("*.h5"))
            ['epoch-1.h5', 'epoch-2.h5']
        """
        loaded = False
        if resume is True:
            folder = self.checkpoint_dir
            found = None if folder is None else latest_checkpoint(folder, _EPOCH_SPLITS)
            if found is not None:
                self.resume(found)
                loaded = True
        elif resume is not False:
            self.resume(resume)
            loaded = True
        splits = ("train", "valid") if valid_loader is not None else ("train",)
        if self._monitored is not None and self._monitored.split not in splits:
            raise ValueError(
                f"Argument `valid_loader` is None, but the learner monitors "
                f"'{self._monitored}' (early_stopping / best_by). "
                "Received: valid_loader=None"
            )
        if loaded and self.checkpoint_dir is not None:
            # A run killed between its last save and the pruning after it left one too many.
            remove_orphans(self.checkpoint_dir)
            self._prune(self.checkpoint_dir, splits)
        self.stopped_at_epoch = None
        loaders = {"train": train_loader, "valid": valid_loader}
        names = {split: self._metrics[split].names for split in splits}
        # Rows past the checkpoint (or, with checkpoints on but none written yet, every row of
        # the run that died before its first) are logged again: file loggers drop them. Without
        # checkpoints a "resume" starts afresh, and earlier logs are left alone.
        redo = loaded or (resume is True and self.checkpoint_dir is not None)
        resumed = {s: self._loop.counter(s) for s in splits} if redo else None
        info = RunInfo(
            splits, self.num_epochs, names, self._logdir_text(), self._position.epoch, resumed
        )
        self._loop.cursor = self._position
        self._loop.non_finite = None
        self._loop.skipped_steps.clear()
        self._loop.num_epochs = self.num_epochs  # it may have been raised to train on
        self._scope.run(
            info,
            lambda: self._epochs(splits, loaders),
            lambda: self._stop_at(self._loop.cursor, splits, loaders),
        )
        return self.model

    def validate(self, loader: Iterable[Any]) -> dict[str, float]:
        """Evaluate on `loader` with the valid metrics, as a run of its own.

        Args:
            loader: Validation batches.

        Returns:
            Metric name -> final value.

        Example:
            >>> from torchtally.optim import SGD
            >>> model = torch.nn.Linear(2, 2)
            >>> learner = Learner(model, SGD(model.parameters(), lr=0.5))
            >>> batches = [(torch.tensor([[1.0, 0.0], [0.0, 1.0]]), torch.tensor([0, 1]))]
            >>> sorted(learner.validate(batches))  # the default metrics: the loss
            ['loss']
        """
        return self._evaluate("valid", loader, None)

    def test(
        self,
        loader: Iterable[Any],
        *,
        curves: bool = False,
        class_names: Sequence[str] | None = None,
    ) -> dict[str, float]:
        """Evaluate on `loader` with the test metrics, as a run of its own.

        Args:
            loader: Test batches.
            curves: Also collect every score and write `logdir/test/curves.json` (confusion
                matrix, per-class ROC and PR curves); kept in `curves` too. Test metrics
                with plot data of their own add it there: a `CalibrationErrorMetric` its
                reliability diagram, a `PrecisionRecallCurveMetric` or `ROCMetric` its
                curves (those two are plotted, never logged), a retrieval metric with a
                cut-off its value at k = 1..top_k (up to 20 k; without `top_k`, up to the
                candidate count). Outputs other than classification ones then give no
                confusion matrix or classic curves instead of an error.
            class_names: Class display names (default: the learner's, else "0", "1", ...).

        Returns:
            Metric name -> final value.

        Example:
            >>> from torchtally.metrics import AccuracyMetric
            >>> from torchtally.optim import SGD
            >>> model = torch.nn.Linear(2, 2)
            >>> with torch.no_grad():
            ...     _ = model.weight.copy_(torch.eye(2)), model.bias.zero_()
            >>> learner = Learner(model, SGD(model.parameters(), lr=0.5), logdir="runs/test",
            ...                   metrics={"valid": [AccuracyMetric("accuracy")]})
            >>> batches = [(torch.tensor([[1.0, 0.0], [0.0, 1.0]]), torch.tensor([0, 1]))]
            >>> learner.test(batches, curves=True, class_names=["cat", "dog"])
            {'accuracy': 1.0}
            >>> learner.curves.roc["dog"]["auc"]
            1.0
        """
        collector = TestCurves(self._metrics["test"]) if curves else None
        values = self._evaluate("test", loader, collector)
        if collector is not None and not self._stop.is_set():
            names = class_names if class_names is not None else self.class_names
            self.curves = collector.result(names)
            if self.logdir is not None:
                write_curve_data(self.logdir, "test", self.curves)
        return values

    def evaluate(
        self, loader: Iterable[Any], *, curves: bool = False, split: str = "test"
    ) -> dict[str, float]:
        """Run an evaluation loader with the `split` metrics and return the results.

        Args:
            loader: The batches (e.g. a test loader).
            curves: Also collect the curves (see `test`); only for split "test".
            split: "test" (default) or "valid": whose metrics to use.

        Returns:
            Metric name -> final value over the whole loader.

        Example:
            >>> from torchtally.optim import SGD
            >>> model = torch.nn.Linear(2, 2)
            >>> learner = Learner(model, SGD(model.parameters(), lr=0.5))
            >>> batches = [(torch.tensor([[1.0, 0.0], [0.0, 1.0]]), torch.tensor([0, 1]))]
            >>> sorted(learner.evaluate(batches))
            ['loss']
        """
        if split == "test":
            return self.test(loader, curves=curves)
        if split == "valid" and not curves:
            return self.validate(loader)
        raise ValueError(
            "Argument `split` must be 'test' or 'valid' (curves only with 'test'). "
            f"Received: split={split!r}, curves={curves!r}"
        )

    def resume(self, path: str | os.PathLike[str] | None = None) -> Path:
        """Load a checkpoint: the next `fit` continues from where it was taken.

        A checkpoint taken part-way through an epoch is continued by replaying the loader's
        first batches of that epoch from the random state they were drawn with, so the loader
        must give the same batches for the same random state (a seeded shuffle does).

        Args:
            path: The checkpoint; None for the latest in `logdir/checkpoints`.

        Returns:
            The checkpoint loaded.

        Raises:
            FileNotFoundError: No checkpoint there.
            ValueError: The file is not a learner checkpoint.

        Example:
            >>> from torchtally.optim import SGD
            >>> model = torch.nn.Linear(2, 2)
            >>> learner = Learner(model, SGD(model.parameters(), lr=0.5), num_epochs=2,
            ...                   logdir="runs/resume")
            >>> _ = learner.fit([(torch.tensor([[1.0, 0.0]]), torch.tensor([0]))])
            >>> learner.resume()  # the latest of logdir/checkpoints
            PosixPath('runs/resume/checkpoints/epoch-2.h5')
        """
        target = self._checkpoint_to_load(path)
        self._restored = self._state.load(target)
        self._position = self._restored.position
        if self._tracker is not None and self._restored.selection:
            self._tracker.load_state_dict(json.loads(self._restored.selection))
        self.last_checkpoint = target
        return target

    # ------------------------------------------------------------------------- internals

    def _epochs(self, splits: tuple[str, ...], loaders: dict[str, Any]) -> bool:
        start = self._position
        resume_rng = self._take_pending_rng(start, splits, loaders)
        for epoch in range(start.epoch, self.num_epochs + 1):
            if self.monitor is not None:
                self.monitor.set_epoch(epoch)
            first = start.split_index if epoch == start.epoch else 0
            for index in range(first, len(splits)):
                part_way = epoch == start.epoch and index == start.split_index
                step = start.step if part_way else 0
                rng = resume_rng if part_way else None
                split = splits[index]
                if not self._loop.run_split(split, loaders[split], epoch, index, step, rng):
                    self._stop_at(self._loop.cursor, splits, loaders)
                    return True
                if self._stop.is_set() and index + 1 < len(splits):
                    self._stop_at(Position(epoch, index + 1, 0), splits, loaders)
                    return True
            self._position = Position(epoch + 1, 0, 0)
            every = self.checkpoint_every
            due = (every is not None and epoch % every == 0) or epoch == self.num_epochs
            due = self._track(epoch) or due
            if due or self._stop.is_set():
                self._save_checkpoint(splits, loaders)
            if self._stop.is_set() and epoch < self.num_epochs:
                return True
        return False

    def _make_tracker(
        self, early: EarlyStopping | None, keep_best: int | None, best_by: str | None
    ) -> tuple[MetricTracker | None, StatisticKey | None]:
        if early is None and keep_best is None:
            if best_by is not None:
                raise ValueError(
                    "Argument `best_by` needs `keep_best` (how many best checkpoints to keep). "
                    f"Received: best_by={best_by!r}, keep_best=None"
                )
            return None, None
        if best_by is not None and early is not None and best_by != early.monitor:
            raise ValueError(
                "Argument `best_by` must name the metric `early_stopping` monitors (one "
                f"monitored metric). Received: best_by={best_by!r}, "
                f"early_stopping.monitor={early.monitor!r}"
            )
        monitor = best_by or (early.monitor if early is not None else "valid/loss")
        argument = "best_by" if best_by is not None or early is None else "early_stopping"
        key = parse_monitor(monitor, argument)
        split, name = key
        metrics = self._metrics.get(split)
        if metrics is None or name not in metrics.metrics:
            known = [f"{s}/{n}" for s, m in self._metrics.items() for n in m.names]
            raise ValueError(
                f"Argument `{argument}` must name one of the learner's metrics "
                f"({', '.join(known)}). Received: {monitor!r}"
            )
        mode = early.mode if early is not None else None
        higher = higher_is_better(metrics.metrics[name], mode, argument, monitor)
        tracker = MetricTracker(higher, early.min_delta if early else 0.0, keep_best or 0)
        return tracker, key

    def _track(self, epoch: int) -> bool:
        """Fold in the monitored metric's epoch value; returns whether to checkpoint now."""
        if self._tracker is None or self._monitored is None:
            return False
        split, name = self._monitored
        values = [
            r.value for r in self.history if (r.split, r.epoch, r.name) == (split, epoch, name)
        ]
        if not values:
            return False
        wanted = self._tracker.update(epoch, values[-1], f"epoch-{epoch}.h5")
        early = self.early_stopping
        patience = early.patience if early is not None else None
        if (
            patience is not None
            and self._tracker.bad_epochs >= patience
            and epoch < self.num_epochs
        ):
            _log.warning(
                "Early stopping after epoch %d: %s has not improved for %d epochs "
                "(best %s at epoch %d).",
                epoch,
                self._monitored,
                self._tracker.bad_epochs,
                self._tracker.best,
                self._tracker.best_epoch,
            )
            self.stopped_at_epoch = epoch
            self._stop.set()
        return wanted

    def _take_pending_rng(
        self, start: Position, splits: tuple[str, ...], loaders: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """Apply a resumed run's random state: now at a split boundary, or hand the split's
        start and stop states to the replay of a split stopped part-way."""
        restored, self._restored = self._restored, None
        if restored is None:
            return None
        if start.step > 0 and restored.split_start_rng is not None:
            return restored.split_start_rng, restored.rng
        loader = loaders.get(splits[start.split_index]) if start.split_index < len(splits) else None
        restore_rng(restored.rng, loader_generator(loader))
        return None

    def _evaluate(
        self, split: str, loader: Iterable[Any], collect: Callable[[Any], None] | None
    ) -> dict[str, float]:
        epoch = max(self.epochs_done, 1)
        names = {split: self._metrics[split].names}
        info = RunInfo((split,), self.num_epochs, names, self._logdir_text(), epoch)
        first = len(self.history)

        def body() -> bool:
            if self.monitor is not None:
                self.monitor.set_epoch(epoch)
            return not self._loop.run_split(split, loader, epoch, 0, 0, None, collect)

        self._scope.run(info, body)
        return {r.name: r.value for r in self.history[first:] if r.split == split}

    def _stop_at(
        self, position: Position, splits: tuple[str, ...], loaders: dict[str, Any]
    ) -> None:
        """Record how far the run got (never backwards) and checkpoint there."""
        self._position = max(self._position, position)
        self._save_checkpoint(splits, loaders)

    def _save_checkpoint(self, splits: tuple[str, ...], loaders: dict[str, Any]) -> None:
        folder = self.checkpoint_dir
        if folder is None or (self._loop.non_finite is not None and self._loop.on_nan == "stop"):
            return  # the last checkpoint is the last good state
        position = self._position
        index = position.split_index
        loader = loaders.get(splits[index]) if index < len(splits) else None
        remove_orphans(folder)  # a save killed part-way, in this run or one before
        selection = "" if self._tracker is None else json.dumps(self._tracker.state_dict())
        self.last_checkpoint = self._state.save(folder, position, splits, loader, None, selection)
        self._prune(folder, splits)

    def _prune(self, folder: Path, splits: tuple[str, ...]) -> None:
        if self.keep_checkpoints is not None:  # every run's checkpoints, not only this one's
            best = [folder / name for _, _, name in self._tracker.ranking] if self._tracker else []
            prune_checkpoints(folder, splits, self.keep_checkpoints, protect=best)

    def _checkpoint_to_load(self, path: str | os.PathLike[str] | None) -> Path:
        if path is not None:
            return Path(path)
        folder = self.checkpoint_dir
        found = None if folder is None else latest_checkpoint(folder, _EPOCH_SPLITS)
        if found is None:
            raise FileNotFoundError(
                "Argument `path` is None, so the latest checkpoint of `logdir` is loaded, but "
                f"there is none. Received: logdir={self._logdir_text()!r}"
            )
        return found

    def _logdir_text(self) -> str | None:
        return None if self.logdir is None else str(self.logdir)


def _check_args(model: Any, optimizer: Any, train_step: Any, eval_step: Any) -> None:
    if not isinstance(model, (nn.Module, CompiledModel)):
        raise TypeError(
            f"Argument `model` must be an nn.Module or a CompiledModel. Received: {type(model).__name__}"
        )
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError(
            "Argument `optimizer` must be a torch.optim.Optimizer (e.g. cstorch.optim.SGD). "
            f"Received: {type(optimizer).__name__}"
        )
    for name, fn in (("train_step", train_step), ("eval_step", eval_step)):
        if fn is not None and not callable(fn):
            raise TypeError(
                f"Argument `{name}` must be a callable (model, batch) -> output or None. "
                f"Received: {name}={fn!r}"
            )
