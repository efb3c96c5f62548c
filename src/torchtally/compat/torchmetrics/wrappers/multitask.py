"""`torchmetrics.wrappers.multitask`: `MultitaskWrapper`."""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from typing import Any

import torch
from torch import nn

from torchtally.compat.torchmetrics._base import Metric
from torchtally.compat.torchmetrics.collection import MetricCollection
from torchtally.compat.torchmetrics.wrappers.abstract import WrapperMetric

__all__ = ["MultitaskWrapper"]


class MultitaskWrapper(WrapperMetric):
    """TorchMetrics' `MultitaskWrapper`: a metric or collection per task,
    `update(task_preds, task_targets)` with a dict of each, results keyed
    `prefix + task + postfix`."""

    def __init__(
        self,
        task_metrics: dict[str, Metric | MetricCollection],
        prefix: str | None = None,
        postfix: str | None = None,
    ) -> None:
        if not isinstance(task_metrics, dict):
            raise TypeError(
                "Expected argument `task_metrics` to be a dict. Found task_metrics = "
                f"{task_metrics} (argument `task_metrics` must be a dict of metrics or metric "
                "collections)"
            )
        for metric in task_metrics.values():
            if not isinstance(metric, (Metric, MetricCollection)):
                raise TypeError(
                    "Expected each task's metric to be a Metric or a MetricCollection. Found a "
                    f"metric of type {type(metric)}"
                )
        for name, value in (("prefix", prefix), ("postfix", postfix)):
            if value is not None and not isinstance(value, str):
                raise ValueError(
                    f"Expected argument `{name}` to either be `None` or a string but got {value}"
                )
        super().__init__()
        self.task_metrics = nn.ModuleDict(task_metrics)
        self._prefix, self._postfix = prefix or "", postfix or ""

    def _tasks(self) -> list[tuple[str, Any]]:
        return list(self.task_metrics.items())

    def _name(self, task: str) -> str:
        return f"{self._prefix}{task}{self._postfix}"

    def items(self, flatten: bool = True) -> Iterator[tuple[str, nn.Module]]:
        """`(name, metric)` per task; with `flatten`, a collection's members one by one
        (named `task_member`)."""
        for task, metric in self.task_metrics.items():
            if flatten and isinstance(metric, MetricCollection):
                for member, sub in metric.items():
                    yield self._name(f"{task}_{member}"), sub
            else:
                yield self._name(task), metric

    def keys(self, flatten: bool = True) -> Iterator[str]:
        """The names `items` gives."""
        for name, _ in self.items(flatten):
            yield name

    def values(self, flatten: bool = True) -> Iterator[nn.Module]:
        """The metrics `items` gives."""
        for _, metric in self.items(flatten):
            yield metric

    def _check_keys(self, task_preds: Any, task_targets: Any) -> None:
        if not self.task_metrics.keys() == task_preds.keys() == task_targets.keys():
            raise ValueError(
                "Expected arguments `task_preds` and `task_targets` to have the same keys as "
                f"the wrapped `task_metrics`. Found task_preds.keys() = {task_preds.keys()}, "
                f"task_targets.keys() = {task_targets.keys()} and self.task_metrics.keys() = "
                f"{self.task_metrics.keys()} (arguments `task_preds` and `task_targets` must "
                f"have the task keys {sorted(self.task_metrics)})"
            )

    def _convert_output(self, output: dict[str, Any]) -> dict[str, Any]:
        return {self._name(task): value for task, value in output.items()}

    def update(self, task_preds: dict[str, Any], task_targets: dict[str, Any]) -> None:
        """Update each task's metric with its predictions and targets."""
        self._check_keys(task_preds, task_targets)
        for task, metric in self._tasks():
            metric.update(task_preds[task], task_targets[task])

    @torch.jit.unused
    def forward(self, task_preds: dict[str, Any], task_targets: dict[str, Any]) -> dict[str, Any]:
        """Each task's batch value."""
        self._check_keys(task_preds, task_targets)
        return self._convert_output(
            {task: metric(task_preds[task], task_targets[task]) for task, metric in self._tasks()}
        )

    def compute(self) -> dict[str, Any]:
        """Each task's value over everything seen."""
        return self._convert_output({task: metric.compute() for task, metric in self._tasks()})

    def reset(self) -> None:
        for _, metric in self._tasks():
            metric.reset()

    @staticmethod
    def _check_arg(arg: str | None, name: str) -> str | None:
        if arg is None or isinstance(arg, str):
            return arg
        raise ValueError(f"Expected input `{name}` to be a string, but got {type(arg)}")

    def clone(self, prefix: str | None = None, postfix: str | None = None) -> MultitaskWrapper:
        """A deep copy with the new `prefix` and `postfix` (None: none)."""
        twin = copy.deepcopy(self)
        twin._prefix = self._check_arg(prefix, "prefix") or ""
        if postfix is not None and not isinstance(postfix, str):
            # TorchMetrics 1.9 names `prefix` in this error (its tests match that text): ours
            # names the argument at fault and carries TorchMetrics' words after it.
            raise ValueError(
                f"Expected input `postfix` to be a string, but got {type(postfix)} "
                "(TorchMetrics' message: Expected input `prefix` to be a string)"
            )
        twin._postfix = postfix or ""
        return twin

    def plot(  # type: ignore[override]
        self, val: dict[str, Any] | Sequence[dict[str, Any]] | None = None, axes: Any = None
    ) -> list[tuple[Any, Any]]:
        """Each task's plot, on `axes` (one per task) when given.

        Raises:
            TypeError: `axes` is not a sequence, or `val` neither a dict nor a sequence of
                dicts.
            ValueError: `axes` does not have one axis per task.
        """
        if axes is not None:
            if not isinstance(axes, Sequence):
                raise TypeError(
                    f"Expected argument `axes` to be a Sequence. Found type(axes) = {type(axes)}"
                )
            if len(axes) != len(self.task_metrics):
                raise ValueError(
                    "Expected argument `axes` to be a Sequence of the same length as the number "
                    f"of tasks.Found len(axes) = {len(axes)} and {len(self.task_metrics)} tasks"
                )
        val = val if val is not None else self.compute()
        out = []
        for index, (task, metric) in enumerate(self._tasks()):
            ax = axes[index] if axes is not None else None
            if isinstance(val, dict):
                out.append(metric.plot(val[self._name(task)], ax=ax))
            elif isinstance(val, Sequence):
                out.append(metric.plot([v[self._name(task)] for v in val], ax=ax))
            else:
                raise TypeError(
                    "Expected argument `val` to be None or of type Dict or Sequence[Dict]. "
                    f"Found type(val)= {type(val)}"
                )
        return out
