"""The three kinds of benchmark metric, as NeuroBench's custom-metrics guide defines them.

A *static* metric reads the model once. A *workload* metric scores one batch; the benchmark
averages its per-batch values weighted by batch size. An *accumulated* metric folds every batch
into its own state and reports `compute()` once the data is exhausted, for values (an R² score,
operations per sample) that an average of per-batch values would get wrong.

Workload metrics may return a 0-d tensor instead of a float: the benchmark keeps such values on
the device and reads them all once, after the last batch, so the loop never waits on the host.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from torch import Tensor

if TYPE_CHECKING:
    from torchtally.bench._model import BenchModel

__all__ = ["AccumulatedMetric", "StaticMetric", "WorkloadMetric"]


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


class AccumulatedMetric(WorkloadMetric):
    """A workload metric that accumulates state over batches and reports `compute()` at the end.

    Its `__call__` folds one batch into the state (its return value is not used by the
    benchmark, which calls `compute()` once after the last batch).

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

    @abstractmethod
    def compute(self) -> Any:
        """Return the value over every batch seen since the last `reset`.

        Returns:
            The metric's value (a float, an int, a dict of them, or tensors holding them).
        """

    @abstractmethod
    def reset(self) -> None:
        """Forget every batch seen; the benchmark calls this at the start of each run."""
