"""What a training run tells its observers: the learner emits these, and the dashboard, the
plain renderer and the loggers consume them. Values are plain Python numbers: the learner
materialises them in step closures, after the step, so an observer never touches a device tensor.

A neutral module at the package root because two layers share it: `metrics.system` emits
`MetricRecord`s of the "system" split and `learn` consumes them, and the metric core must not
import `learn` (see tests/test_import_contract.py). The public names live in `torchtally.learn`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple, final

__all__ = [
    "SYSTEM_SPLIT",
    "CurveData",
    "MetricRecord",
    "Observer",
    "Progress",
    "RunInfo",
    "StatisticKey",
    "adapt_observer",
]

#: The split name of machine metrics (CPU/GPU), sampled off the training path.
SYSTEM_SPLIT = "system"


class StatisticKey(NamedTuple):
    """Which logged statistic: a split and a metric name, written "split/name".

    Example:
        >>> key = StatisticKey("valid", "accuracy")
        >>> key.split, key.name, str(key)
        ('valid', 'accuracy', 'valid/accuracy')
    """

    split: str
    name: str

    def __str__(self) -> str:
        return f"{self.split}/{self.name}"


@dataclass(frozen=True)
class MetricRecord:
    """One logged value.

    Attributes:
        split: "train", "valid", "test" or `SYSTEM_SPLIT`.
        epoch: 1-based epoch the value belongs to (0 for system samples before training).
        step: The global step (optimizer steps for train; evaluation steps for valid/test,
            counted from the start of the run) when the value was taken.
        name: Metric name, e.g. "loss", "accuracy", "cpu_usage".
        value: The value; percentages are fractions in [0, 1], shown ×100 only for display.
        wall_time: `time.time()` when the value was taken.
        unit: Display unit ("", "%", "°C", "GiB", "W", ...).
    """

    split: str
    epoch: int
    step: int
    name: str
    value: float
    wall_time: float
    unit: str = ""

    @property
    def key(self) -> StatisticKey:
        """The statistic this record is a value of."""
        return StatisticKey(self.split, self.name)


@dataclass(frozen=True)
class Progress:
    """Where the run is.

    Attributes:
        split: The split being run.
        epoch: 1-based current epoch.
        num_epochs: Total epochs of the run.
        step: 1-based step within the split's current epoch.
        steps_in_epoch: Steps of this split per epoch (None if the loader has no length).
        global_step: Optimizer steps so far.
        samples_per_second: Smoothed throughput of the current split (None before the first).
        records_step: The `step` the records of this step carry (the global step for train,
            the evaluation step for valid/test), so a renderer can pair a step's progress
            with its values, which arrive after it; None when unknown.
    """

    split: str
    epoch: int
    num_epochs: int
    step: int
    steps_in_epoch: int | None
    global_step: int
    samples_per_second: float | None = None
    records_step: int | None = None


@dataclass(frozen=True)
class RunInfo:
    """Static facts about a run, given once at its start.

    Attributes:
        splits: The splits that will run, in order (e.g. ("train", "valid")).
        num_epochs: Total epochs.
        metric_names: Split -> the metric names it logs.
        logdir: Where logs go (None when not logging to files).
        start_epoch: 1-based epoch the run starts at (> 1 when resumed).
        resumed_steps: For a `fit` asked to resume: split -> the step counter its records
            continue from (the checkpoint's; 0 without one). Records of those splits logged
            earlier with a larger step came after that checkpoint and will be logged again, so a
            file logger drops them. None for a run that does not resume.
    """

    splits: tuple[str, ...]
    num_epochs: int
    metric_names: dict[str, tuple[str, ...]]
    logdir: str | None = None
    start_epoch: int = 1
    resumed_steps: dict[str, int] | None = None


@dataclass
class CurveData:
    """Curves a split's final evaluation leaves for plotting (written as JSON by the learner).

    Attributes:
        confusion_matrix: Rows = labels, columns = predictions (counts).
        class_names: Display names of the classes.
        roc: Class name -> {"fpr": [...], "tpr": [...], "auc": float}.
        pr: Class name -> {"recall": [...], "precision": [...], "ap": float}.
        reliability: Calibration metric name -> its reliability diagram: {"edges": [...],
            "confidence": [...], "accuracy": [...], "weight": [...] (per bin), "norm": str,
            "value": float}.
        metric_pr: Precision-recall curve metric name -> class name -> {"precision": [...],
            "recall": [...], "thresholds": [...]} as the metric computes them.
        metric_roc: ROC curve metric name -> class name -> {"fpr": [...], "tpr": [...],
            "thresholds": [...]} as the metric computes them.
        at_k: Retrieval metric name -> {"k": [...], "value": [...], "top_k": int or None,
            "logged_k": the k of the value it logs, or None}.
    """

    confusion_matrix: list[list[float]] | None = None
    class_names: list[str] = field(default_factory=list)
    roc: dict[str, dict[str, object]] = field(default_factory=dict)
    pr: dict[str, dict[str, object]] = field(default_factory=dict)
    reliability: dict[str, dict[str, object]] = field(default_factory=dict)
    metric_pr: dict[str, dict[str, dict[str, object]]] = field(default_factory=dict)
    metric_roc: dict[str, dict[str, dict[str, object]]] = field(default_factory=dict)
    at_k: dict[str, dict[str, object]] = field(default_factory=dict)


class Observer:
    """Receives a run's events: subclass it and override the events that concern you; the
    others do nothing.

    Calls come from the training thread, except `on_records` with system samples, which may
    come from a `SystemMonitor`'s sampler thread. An object that does not subclass `Observer`
    but defines some of these methods is accepted too (the learner and the system monitor wrap
    it once, with `adapt_observer`).

    Example:
        >>> class Losses(Observer):
        ...     def __init__(self):
        ...         self.values = []
        ...     def on_records(self, records):
        ...         self.values += [r.value for r in records if r.name == "loss"]
        >>> losses = Losses()
        >>> losses.on_run_start(RunInfo(("train",), 1, {"train": ("loss",)}))  # inherited no-op
        >>> losses.on_records([MetricRecord("train", 1, 1, "loss", 0.5, 0.0)])
        >>> losses.values
        [0.5]
    """

    __slots__ = ()

    def on_run_start(self, info: RunInfo) -> None:
        """A run starts (`fit`, `validate` or `test`).

        Args:
            info: The run's static facts.
        """

    def on_progress(self, progress: Progress) -> None:
        """A step finished.

        Args:
            progress: Where the run is.
        """

    def on_records(self, records: list[MetricRecord]) -> None:
        """Values were logged (a step's, an epoch's or a system sample's).

        Args:
            records: The values; the list is the observer's own.
        """

    def on_epoch_end(self, split: str, epoch: int) -> None:
        """A split finished an epoch; its epoch records were sent before.

        Args:
            split: The split.
            epoch: The 1-based epoch.
        """

    def on_run_end(self, stopped_early: bool) -> None:
        """The run ended, normally or not (also after an exception or a stop request).

        Args:
            stopped_early: Whether it ended before its last epoch (a stop request, an early
                stop, an interrupt or an error).
        """

    def bind_stop(self, request_stop: Callable[[], None]) -> bool:
        """Offered the learner's `request_stop` once, when the observer is given to a learner:
        an observer that can stop the run (the dashboard's `q`) keeps it.

        Args:
            request_stop: Stops the run after the current step, with a checkpoint
                (thread-safe).

        Returns:
            Whether the observer kept `request_stop` (False here: it ignores it).
        """
        return False


#: The events, in the order a run sends them (with `bind_stop`, what an adapted object may define).
_EVENTS = ("on_run_start", "on_progress", "on_records", "on_epoch_end", "on_run_end")


def _ignore(*args: object) -> None:
    """The event handler of an adapted object that lacks the event's method."""


def _ignore_stop(request_stop: Callable[[], None]) -> bool:
    return False


@final
class _Adapted(Observer):
    """An `Observer` forwarding to an object that defines some of the event methods without
    subclassing `Observer`. The methods are looked up once, here, not on every event."""

    __slots__ = (
        "_bind_stop",
        "_on_epoch_end",
        "_on_progress",
        "_on_records",
        "_on_run_end",
        "_on_run_start",
        "target",
    )

    def __init__(self, target: object) -> None:
        self.target = target
        self._on_run_start: Callable[[RunInfo], None] = _method(target, "on_run_start")
        self._on_progress: Callable[[Progress], None] = _method(target, "on_progress")
        self._on_records: Callable[[list[MetricRecord]], None] = _method(target, "on_records")
        self._on_epoch_end: Callable[[str, int], None] = _method(target, "on_epoch_end")
        self._on_run_end: Callable[[bool], None] = _method(target, "on_run_end")
        bind = getattr(target, "bind_stop", None)
        self._bind_stop: Callable[[Callable[[], None]], bool] = (
            bind if callable(bind) else _ignore_stop
        )

    def on_run_start(self, info: RunInfo) -> None:
        self._on_run_start(info)

    def on_progress(self, progress: Progress) -> None:
        self._on_progress(progress)

    def on_records(self, records: list[MetricRecord]) -> None:
        self._on_records(records)

    def on_epoch_end(self, split: str, epoch: int) -> None:
        self._on_epoch_end(split, epoch)

    def on_run_end(self, stopped_early: bool) -> None:
        self._on_run_end(stopped_early)

    def bind_stop(self, request_stop: Callable[[], None]) -> bool:
        return bool(self._bind_stop(request_stop))

    def __repr__(self) -> str:
        return repr(self.target)  # log messages name the user's object


def _method(target: object, name: str) -> Any:
    # The one probe of a foreign object, made when it is adapted.
    method = getattr(target, name, None)
    return method if callable(method) else _ignore


def adapt_observer(candidate: object, argument: str, needs: tuple[str, ...] = ()) -> Observer:
    """`candidate` as an `Observer`: itself when it is one, otherwise a wrapper that forwards
    the event methods it defines (looked up once, now) and ignores the others.

    Args:
        candidate: An `Observer`, or an object defining some of its event methods.
        argument: The argument name that error messages name.
        needs: Event methods a non-`Observer` must define (a system monitor sends only
            `on_records`); with none given, it must define at least one event method.

    Returns:
        The observer to call.

    Raises:
        TypeError: `candidate` is no `Observer` and lacks the methods asked for.

    Example:
        >>> class Printer:  # no subclass of Observer: adapted
        ...     def on_epoch_end(self, split, epoch):
        ...         print(split, epoch)
        >>> observer = adapt_observer(Printer(), "observers")
        >>> observer.on_records([])  # Printer has none: ignored
        >>> observer.on_epoch_end("train", 1)
        train 1
    """
    if isinstance(candidate, Observer):
        return candidate
    if isinstance(candidate, type):  # its methods are unbound: every event would fail later
        raise TypeError(
            f"Argument `{argument}` must hold observer instances, not classes. Received: the "
            f"class {candidate.__name__}; pass an instance, e.g. {candidate.__name__}(...)"
        )
    defined = {name for name in _EVENTS if callable(getattr(candidate, name, None))}
    if needs:
        missing = [name for name in needs if name not in defined]
        if missing:
            methods = ", ".join(f"`{name}`" for name in missing)
            raise TypeError(
                f"Argument `{argument}` must have an {methods} method (or be an `Observer`). "
                f"Received: {argument}={candidate!r}"
            )
    elif not defined:
        raise TypeError(
            f"Argument `{argument}` must hold observers: `Observer` instances, or objects with "
            "some of the methods on_run_start, on_progress, on_records, on_epoch_end, "
            f"on_run_end. Received: {candidate!r}"
        )
    return _Adapted(candidate)
