"""How the benchmark drives each kind of workload metric through a run.

One runner per metric adapts its kind to a common `reset` / `update` / `result` cycle:
a plain workload metric's per-batch values are kept (on the device) and averaged by batch size
at the end; an accumulated metric reports `compute()`; a `torchtally.metrics.Metric` is updated
with `(labels, predictions)` and reports `compute()`. Values are read from the device once,
in `result`.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from typing import Any, final

import torch
from torch import Tensor

from torchtally.bench._harness.model import BenchModel
from torchtally.bench._metrics.metric_types import AccumulatedMetric, WorkloadMetric
from torchtally.metrics import Metric

__all__ = ["MetricRunner", "make_runner", "to_python"]


def to_python(value: Any) -> Any:
    """Tensors (also inside dicts, lists and tuples) to Python numbers and lists.

    Args:
        value: A metric's value.

    Returns:
        The value with every tensor read to the host.

    Example:
        >>> to_python({"a": torch.tensor(2.5)})
        {'a': 2.5}
    """
    if isinstance(value, Tensor):
        return value.item() if value.dim() == 0 else value.tolist()
    if isinstance(value, dict):
        return {k: to_python(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_python(v) for v in value]
    return value


class MetricRunner(ABC):
    """Drives one workload metric through a run.

    Args:
        name: The metric's result key (its class name).
        requires_hooks: Whether the model must be hooked for it.
    """

    def __init__(self, name: str, requires_hooks: bool) -> None:
        self.name = name
        self.requires_hooks = requires_hooks

    def to(self, device: torch.device | str) -> None:
        """Move the metric's state to `device` (a no-op unless the metric has tensor state).

        Args:
            device: The run's device.
        """
        return None  # most metrics hold no device state

    @abstractmethod
    def reset(self) -> None:
        """Start a new run."""

    @abstractmethod
    def update(self, model: BenchModel, preds: Any, data: tuple[Any, ...], batch_size: int) -> None:
        """Fold one batch in.

        Args:
            model: The wrapped model (its hooks hold the batch's records).
            preds: The postprocessed predictions.
            data: The batch as the dataloader gave it.
            batch_size: Its number of samples.
        """

    @abstractmethod
    def result(self) -> Any:
        """The metric's value over the run so far, read to Python.

        Returns:
            The value.
        """


@final
class _AveragedRunner(MetricRunner):
    """A `WorkloadMetric`: per-batch values averaged, weighted by batch size."""

    def __init__(self, metric: WorkloadMetric, name: str) -> None:
        super().__init__(name, metric.requires_hooks)
        self.metric = metric
        self._values: list[Tensor | float] = []
        self._sizes: list[int] = []

    def reset(self) -> None:
        self._values, self._sizes = [], []

    def update(self, model: BenchModel, preds: Any, data: tuple[Any, ...], batch_size: int) -> None:
        self._values.append(_check_scalar(self.name, self.metric.batch_value(model, preds, data)))
        self._sizes.append(batch_size)

    def result(self) -> float:
        if not self._values:
            raise ValueError(f"{self.name}: no batch was seen")
        values = _read_scalars(self._values)
        seen = sum(self._sizes)
        total = 0.0
        for value, size in zip(values, self._sizes):
            # NeuroBench's order of operations (value * size / samples, summed in turn), so
            # the average is bit-identical to its.
            total += (value * size) / seen
        return total


@final
class _AccumulatedRunner(MetricRunner):
    """An `AccumulatedMetric`: `reset`, one call per batch, `compute` at the end."""

    def __init__(self, metric: AccumulatedMetric, name: str) -> None:
        super().__init__(name, metric.requires_hooks)
        self.metric = metric

    def reset(self) -> None:
        self.metric.reset()

    def update(self, model: BenchModel, preds: Any, data: tuple[Any, ...], batch_size: int) -> None:
        self.metric.accumulate(model, preds, data)

    def result(self) -> Any:
        return to_python(self.metric.compute())


@final
class _TallyRunner(MetricRunner):
    """A `torchtally.metrics.Metric`: `update(labels, predictions)`, `compute()` at the end
    (which raises the data errors `update` counted)."""

    def __init__(self, metric: Metric, name: str) -> None:
        super().__init__(name, requires_hooks=False)
        self.metric = metric

    def to(self, device: torch.device | str) -> None:
        self.metric.to(device)

    def reset(self) -> None:
        self.metric.reset()

    def update(self, model: BenchModel, preds: Any, data: tuple[Any, ...], batch_size: int) -> None:
        self.metric.update(data[1], preds)

    def result(self) -> Any:
        return to_python(self.metric.compute())


def make_runner(metric: WorkloadMetric | Metric, name: str) -> MetricRunner:
    """The runner for a workload metric instance.

    Args:
        metric: A `WorkloadMetric`, `AccumulatedMetric` or `torchtally.metrics.Metric`.
        name: Its result key.

    Returns:
        The runner.

    Raises:
        TypeError: For any other object.

    Example:
        >>> from torchtally.bench import MSE
        >>> make_runner(MSE(), "MSE").requires_hooks
        False
    """
    if isinstance(metric, AccumulatedMetric):
        return _AccumulatedRunner(metric, name)
    if isinstance(metric, WorkloadMetric):
        return _AveragedRunner(metric, name)
    if isinstance(metric, Metric):
        return _TallyRunner(metric, name)
    raise TypeError(
        f"workload metric `{name}` must be a WorkloadMetric, AccumulatedMetric or "
        f"torchtally.metrics.Metric. Received: {type(metric).__name__}"
    )


def _check_scalar(name: str, value: Any) -> Tensor | float:
    if isinstance(value, Tensor) and value.numel() == 1:
        return value.detach().reshape(())
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return float(value)
    raise TypeError(
        f"{name} must return a number or a one-element tensor per batch (make it an "
        f"AccumulatedMetric to return anything else). Received: {type(value).__name__}"
    )


def _read_scalars(values: list[Tensor | float]) -> list[float]:
    tensors = [v for v in values if isinstance(v, Tensor)]
    if not tensors:
        return [float(v) for v in values]
    # One host read for every batch's value; float64 holds float32 and int values exactly.
    read = iter(torch.stack([t.to(tensors[0].device, torch.float64) for t in tensors]).tolist())
    return [next(read) if isinstance(v, Tensor) else float(v) for v in values]
