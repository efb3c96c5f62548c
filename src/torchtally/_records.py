"""What a training run tells its observers: the learner emits these, and the dashboard, the
plain renderer and the loggers consume them. Values are plain Python numbers: the learner
materialises them in step closures, after the step, so an observer never touches a device tensor.

A neutral module at the package root because two layers share it: `metrics.system` emits
`MetricRecord`s of the "system" split and `learn` consumes them, and the metric core must not
import `learn` (see tests/test_import_contract.py). The public names live in `torchtally.learn`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple, Protocol, runtime_checkable

__all__ = [
    "SYSTEM_SPLIT",
    "CurveData",
    "MetricRecord",
    "Observer",
    "Progress",
    "RunInfo",
    "StatisticKey",
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


@runtime_checkable
class Observer(Protocol):
    """Receives a run's events. Every method is optional in spirit: implement them all, doing
    nothing where an event does not concern you. Calls come from the training thread, except
    `on_records` with system samples, which may come from the sampler's thread."""

    def on_run_start(self, info: RunInfo) -> None: ...

    def on_progress(self, progress: Progress) -> None: ...

    def on_records(self, records: list[MetricRecord]) -> None: ...

    def on_epoch_end(self, split: str, epoch: int) -> None: ...

    def on_run_end(self, stopped_early: bool) -> None: ...
