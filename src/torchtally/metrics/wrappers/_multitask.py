"""`MultitaskWrapper`: one metric (or collection) per task, fed and computed together."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from torch import nn

__all__ = ["MultitaskWrapper"]


class MultitaskWrapper(nn.Module):
    """A metric or `MetricCollection` per task (TorchMetrics' `MultitaskWrapper`).

    `update(batch)` takes a dict with one entry per task: the positional arguments of that
    task's `update` (a tuple, or a dict of keyword arguments), so each task keeps its
    metric's own argument order. `compute()` returns `{task: value}`. Every member stays a
    regular metric (traceable, mergeable, syncable on its own).

    Args:
        task_metrics: `{task name: metric or collection}`.

    Example:
        >>> from torchtally.metrics import AccuracyMetric, MSEMetric
        >>> tasks = MultitaskWrapper({"class": AccuracyMetric(), "depth": MSEMetric()})
        >>> tasks.update({
        ...     "class": (torch.tensor([0, 1]), torch.tensor([0, 0])),
        ...     "depth": (torch.tensor([1.0, 2.0]), torch.tensor([1.0, 4.0])),
        ... })
        >>> {k: float(v) for k, v in tasks.compute().items()}
        {'class': 0.5, 'depth': 2.0}
    """

    def __init__(self, task_metrics: Mapping[str, Any]) -> None:
        if not isinstance(task_metrics, Mapping) or not task_metrics:
            raise TypeError(
                "Argument `task_metrics` must be a non-empty dict of task name to metric. "
                f"Received: task_metrics={type(task_metrics).__name__}"
            )
        for task, metric in task_metrics.items():
            if not hasattr(metric, "update") or not hasattr(metric, "compute"):
                raise TypeError(
                    f"Argument `task_metrics` must map task names to metrics. Received: "
                    f"{task!r} -> {type(metric).__name__}"
                )
        super().__init__()
        self.task_metrics = nn.ModuleDict(dict(task_metrics))

    def update(self, batch: Mapping[str, Sequence[Any] | Mapping[str, Any]]) -> None:
        """Update every task with its arguments (`batch` must name exactly the tasks)."""
        if set(batch) != set(self.task_metrics):
            raise ValueError(
                "Argument `batch` must have one entry per task "
                f"{sorted(self.task_metrics)}. Received: {sorted(batch)}"
            )
        for task, member in self.task_metrics.items():
            metric: Any = member
            arguments = batch[task]
            if isinstance(arguments, Mapping):
                metric.update(**arguments)
            else:
                metric.update(*arguments)

    def compute(self) -> dict[str, Any]:
        members: dict[str, Any] = dict(self.task_metrics.items())
        return {task: metric.compute() for task, metric in members.items()}

    def reset(self) -> None:
        members: list[Any] = list(self.task_metrics.values())
        for metric in members:
            metric.reset()

    def forward(self, batch: Mapping[str, Any]) -> dict[str, Any]:
        self.update(batch)
        return self.compute()
