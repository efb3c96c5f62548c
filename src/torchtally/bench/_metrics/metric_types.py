"""The three kinds of benchmark metric, as NeuroBench's custom-metrics guide defines them.

A *static* metric reads the model once. A *workload* metric scores one batch; the benchmark
averages its per-batch values weighted by batch size. An *accumulated* metric folds every batch
into its own state and reports `compute()` once the data is exhausted, for values (an R² score,
operations per sample) that an average of per-batch values would get wrong.

Calling a metric follows NeuroBench 2.3.0: a workload metric returns the batch's value as a
Python number, an accumulated metric folds the batch in and returns `compute()`. The benchmark
does not call them: it calls `batch_value` / `accumulate`, which the built-in metrics implement
with tensors left on the device, and reads every value once, after the last batch, so the loop
never waits on the host. For a custom metric both default to its `__call__`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from torch import Tensor

if TYPE_CHECKING:
    from torchtally.bench._harness.model import BenchModel

__all__ = [
    "AccumulatedMetric",
    "DeviceAccumulatedMetric",
    "DeviceWorkloadMetric",
    "StaticMetric",
    "WorkloadMetric",
]


class StaticMetric(ABC):
    """A property of the model itself (its size, its weights), computed once per run.

    Example:
        >>> class LayerCount(StaticMetric):
        ...     def __call__(self, model):
        ...         return len(list(model.__net__().children()))
    """

    @abstractmethod
    def __call__(self, model: BenchModel) -> Any:
        """Compute the metric.

        Args:
            model: The wrapped model under benchmark.

        Returns:
            The metric's value, usually a float or an int.
        """


class WorkloadMetric(ABC):
    """A score of one batch of inference; the benchmark averages it weighted by batch size.

    Args:
        requires_hooks: Whether the metric reads the activation or connection hooks, which
            the benchmark then registers on the model for the run.

    Example:
        >>> class Accuracy(WorkloadMetric):
        ...     def __call__(self, model, preds, data):
        ...         return (preds == data[1]).float().mean()
    """

    def __init__(self, requires_hooks: bool = False) -> None:
        self._requires_hooks = bool(requires_hooks)

    @property
    def requires_hooks(self) -> bool:
        """Whether the benchmark must register hooks on the model for this metric."""
        return self._requires_hooks

    @abstractmethod
    def __call__(self, model: BenchModel, preds: Tensor, data: tuple[Tensor, ...]) -> Any:
        """Score one batch.

        Args:
            model: The wrapped model, whose hooks hold what the batch's forward pass recorded.
            preds: The model's postprocessed predictions for the batch.
            data: The batch as the dataloader gave it: `(inputs, labels, ...)`.

        Returns:
            The batch's value: a float, or a 0-d tensor (read once at the end of the run).
        """

    def batch_value(self, model: BenchModel, preds: Tensor, data: tuple[Tensor, ...]) -> Any:
        """The batch's value as the benchmark collects it (by default, `self(...)`).

        Args:
            model: The wrapped model.
            preds: The postprocessed predictions.
            data: The batch.

        Returns:
            A number or a one-element tensor; a tensor stays on the device until the run ends.
        """
        return self(model, preds, data)


class AccumulatedMetric(WorkloadMetric):
    """A workload metric that accumulates state over batches and reports `compute()` at the end.

    Its `__call__` folds one batch into the state and (in NeuroBench's convention) returns
    `compute()`. The benchmark calls `accumulate` per batch (by default `__call__`) and
    `compute()` once after the last batch, so a custom `__call__` may also return None.

    Example:
        >>> class MaxError(AccumulatedMetric):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.worst = None
        ...     def __call__(self, model, preds, data):
        ...         err = (preds - data[1]).abs().max()
        ...         self.worst = err if self.worst is None else self.worst.maximum(err)
        ...     def compute(self):
        ...         return float(self.worst)
        ...     def reset(self):
        ...         self.worst = None
    """

    def accumulate(self, model: BenchModel, preds: Tensor, data: tuple[Tensor, ...]) -> None:
        """Fold one batch into the state without computing the value (by default, `self(...)`).

        Args:
            model: The wrapped model.
            preds: The postprocessed predictions.
            data: The batch.
        """
        self(model, preds, data)

    @abstractmethod
    def compute(self) -> Any:
        """Return the value over every batch seen since the last `reset`.

        Returns:
            The metric's value (a float, an int, a dict of them, or tensors holding them).
        """

    @abstractmethod
    def reset(self) -> None:
        """Forget every batch seen; the benchmark calls this at the start of each run."""


class DeviceWorkloadMetric(WorkloadMetric):
    """A workload metric whose batch value is a device tensor; calling it returns a float.

    Subclasses implement `batch_value`; `__call__` reads it to the host (NeuroBench's
    convention), which the benchmark never does per batch.
    """

    @abstractmethod
    def batch_value(self, model: BenchModel, preds: Tensor, data: tuple[Tensor, ...]) -> Tensor:
        """The batch's value as a 0-d tensor (see `WorkloadMetric.batch_value`)."""

    def __call__(self, model: BenchModel, preds: Tensor, data: tuple[Tensor, ...]) -> float:
        """The batch's value as a Python float."""
        return float(self.batch_value(model, preds, data).item())


class DeviceAccumulatedMetric(AccumulatedMetric):
    """An accumulated metric with device-side state; calling it adds the batch and returns
    `compute()` (NeuroBench's convention), while the benchmark calls only `accumulate`."""

    @abstractmethod
    def accumulate(self, model: BenchModel, preds: Tensor, data: tuple[Tensor, ...]) -> None:
        """Fold one batch into the state (see `AccumulatedMetric.accumulate`)."""

    def __call__(self, model: BenchModel, preds: Tensor, data: tuple[Tensor, ...]) -> Any:
        """Fold one batch in and return the value over every batch so far."""
        self.accumulate(model, preds, data)
        return self.compute()
