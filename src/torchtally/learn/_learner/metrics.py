"""The metrics of one split (train, valid or test): updated and computed inside the step.

Each entry is a metric, or a `(metric, adaptor)` pair whose adaptor overrides the registry.
`update` feeds every metric from the step output (the optimizer, for `LearningRateMetric`)
and `compute` returns their running values as tensors: both are tensor work only, so they run
inside the traced step. Every state of these metrics is made persistent, so the learner's
checkpoints hold all of it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, final

import torch

from torchtally.learn._adaptor import Adaptor, adapt
from torchtally.learn._learner.records import metric_unit
from torchtally.metrics import LearningRateMetric, MeanMetric, Metric
from torchtally.metrics.curves import PrecisionRecallCurveMetric, ROCMetric

__all__ = ["PLOT_ONLY", "SPLITS", "MetricSpec", "SplitMetrics", "default_metrics", "split_metrics"]

#: The splits a learner runs, in the order they run within an epoch (test runs on its own).
SPLITS = ("train", "valid", "test")

#: Metrics whose value is a curve, not a number: updated with the others but never logged
#: (their curves are plotted after `Learner.test(..., curves=True)`; computing an exact curve
#: reads the buffer's fill count on the host, which a traced step refuses).
PLOT_ONLY: tuple[type[Metric], ...] = (PrecisionRecallCurveMetric, ROCMetric)

#: A metric, or a metric with the adaptor that feeds it.
MetricSpec = Metric | tuple[Metric, Adaptor]


@final
class SplitMetrics:
    """The metrics of one split, keyed by name.

    Args:
        split: The split's name (for error messages).
        specs: Metrics, or `(metric, adaptor)` pairs.
        device: Where the metric states live (the model's device).

    Example:
        >>> from torchtally.metrics import AccuracyMetric
        >>> metrics = SplitMetrics("valid", [MeanMetric("loss"), AccuracyMetric("accuracy")], "cpu")
        >>> metrics.names
        ('loss', 'accuracy')
    """

    def __init__(self, split: str, specs: Sequence[MetricSpec], device: torch.device | str) -> None:
        self.split = split
        self.metrics: dict[str, Metric] = {}
        self._adaptors: dict[str, Adaptor | None] = {}
        for spec in specs:
            metric, fn = _unpack(split, spec)
            if metric.name in self.metrics:
                raise ValueError(
                    f"Argument `metrics` must not name two metrics of split {split!r} alike. "
                    f"Received: two metrics named {metric.name!r}"
                )
            metric.persistent(True)
            metric.to(device)
            self.metrics[metric.name] = metric
            self._adaptors[metric.name] = fn
        self.units = {name: metric_unit(m) for name, m in self.metrics.items()}

    @property
    def names(self) -> tuple[str, ...]:
        """The names of the logged metrics, in the order given (not the `PLOT_ONLY` ones)."""
        return tuple(name for name, m in self.metrics.items() if not isinstance(m, PLOT_ONLY))

    def adaptor(self, name: str) -> Adaptor | None:
        """The adaptor given with metric `name` (None: the registry's).

        Args:
            name: A metric name of this split.
        """
        return self._adaptors[name]

    def update(self, output: Any, optimizer: torch.optim.Optimizer) -> None:
        """Fold one step's output into every metric (tensor work only).

        Args:
            output: The step's output.
            optimizer: Feeds the metrics of `input_kind` "learning_rate" (`LearningRateMetric`)
                that have no adaptor of their own.
        """
        for name, metric in self.metrics.items():
            fn = self._adaptors[name]
            if fn is None and metric.input_kind == "learning_rate":
                metric.update(optimizer)
                continue
            inputs = adapt(output, metric, fn)
            metric.update(*inputs.args, **inputs.kwargs)

    def compute(self) -> dict[str, Any]:
        """The running values (tensors), keyed by metric name (not the `PLOT_ONLY` ones)."""
        return {
            name: metric.compute()
            for name, metric in self.metrics.items()
            if not isinstance(metric, PLOT_ONLY)
        }

    def reset(self) -> None:
        """Reset every metric (at the start of each epoch of the split)."""
        for metric in self.metrics.values():
            metric.reset()

    def check_errors(self) -> None:
        """Raise the data errors the metrics counted (a host read: call it after the loop)."""
        for metric in self.metrics.values():
            metric.check_errors()

    def state_dict(self) -> dict[str, Any]:
        """Every metric's full state, keyed by metric name."""
        return {name: metric.state_dict() for name, metric in self.metrics.items()}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore the states saved by `state_dict` (metrics missing from `state` are reset).

        Args:
            state: Metric name -> that metric's state dict.
        """
        for name, metric in self.metrics.items():
            saved = state.get(name)
            if saved is None:
                metric.reset()
            else:
                metric.load_state_dict(saved)


def default_metrics(split: str) -> list[MetricSpec]:
    """The metrics of a split when none are given: the loss, and the learning rate for train.

    Args:
        split: "train", "valid" or "test".

    Returns:
        New metric instances.
    """
    specs: list[MetricSpec] = [MeanMetric("loss")]
    if split == "train":
        specs.append(LearningRateMetric())
    return specs


def split_metrics(
    metrics: Mapping[str, Sequence[MetricSpec]] | None,
) -> dict[str, list[MetricSpec]]:
    """Every split's metric specs: the given ones, else defaults (test: a copy of valid's).

    Args:
        metrics: Split -> metrics, for any of "train", "valid", "test"; None for defaults.

    Returns:
        Split -> specs, for all three splits, no metric instance shared between splits.
    """
    given = {} if metrics is None else dict(metrics)
    for key in given:
        if key not in SPLITS:
            raise ValueError(
                f"Argument `metrics` keys must be among {SPLITS}. Received: key {key!r}"
            )
    chosen: dict[str, list[MetricSpec]] = {}
    for split in SPLITS:
        if split in given:
            chosen[split] = list(given[split])
        elif split == "test" and "valid" in given:
            chosen[split] = copy.deepcopy(list(given["valid"]))
        else:
            chosen[split] = default_metrics(split)
    _refuse_sharing(chosen)
    return chosen


def _unpack(split: str, spec: Any) -> tuple[Metric, Adaptor | None]:
    if isinstance(spec, Metric):
        return spec, None
    if (
        isinstance(spec, tuple)
        and len(spec) == 2
        and isinstance(spec[0], Metric)
        and callable(spec[1])
    ):
        return spec[0], spec[1]
    raise TypeError(
        f"Argument `metrics[{split!r}]` must hold torchtally metrics or (metric, adaptor) "
        f"pairs. Received: {spec!r}"
    )


def _refuse_sharing(chosen: Mapping[str, Sequence[MetricSpec]]) -> None:
    owner: dict[int, str] = {}
    for split, specs in chosen.items():
        for spec in specs:
            metric, _ = _unpack(split, spec)
            previous = owner.setdefault(id(metric), split)
            if previous != split:
                raise ValueError(
                    "Argument `metrics` must give each split its own metric instances (a "
                    f"shared one would mix their states). Received: metric {metric.name!r} "
                    f"in both {previous!r} and {split!r}"
                )
