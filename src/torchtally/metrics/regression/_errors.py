"""`MSEMetric`, `MAEMetric`, `SMAPEMetric`: means of a per-element error over every batch."""

from __future__ import annotations

from abc import abstractmethod
from typing import cast, final

import torch
from torch import Tensor

from torchtally._errors import ErrorKinds
from torchtally.functional._checks import check_tensor, count_nonfinite
from torchtally.functional.regression._errors import (
    absolute_error_sum,
    absolute_error_sum_checked,
    smape_sum,
    squared_error_sum,
    squared_error_sum_checked,
)
from torchtally.metrics._base import Metric

__all__ = ["MAEMetric", "MSEMetric", "SMAPEMetric"]


class _MeanErrorMetric(Metric):
    """Accumulates a per-element error's sum and the element count (exact across batches)."""

    error_kinds = ErrorKinds(
        nonfinite_labels="non-finite labels",
        nonfinite_predictions="non-finite predictions",
    )
    array_inputs = ("labels", "predictions")
    scale = 1.0

    def __init__(self, name: str | None = None, *, check_values: bool = True) -> None:
        super().__init__(name, check_values=check_values)
        self.register_state("error_sum", torch.zeros((), dtype=torch.float64))
        self.register_state("count", torch.zeros((), dtype=torch.float64))

    @staticmethod
    @abstractmethod
    def _batch_sum(labels: Tensor, predictions: Tensor) -> Tensor: ...

    @classmethod
    def _checked_sum(
        cls, labels: Tensor, predictions: Tensor
    ) -> tuple[Tensor, Tensor | None, Tensor | None]:
        """The batch sum and the non-finite label and prediction counts (overridden where a
        functional takes them in fewer passes)."""
        return (
            cls._batch_sum(labels, predictions),
            count_nonfinite(labels),
            count_nonfinite(predictions),
        )

    def update(self, labels: Tensor, predictions: Tensor) -> None:
        """Add one batch of targets and predictions (same shape).

        The order is `(labels, predictions)`, cstorch's (TorchMetrics' is `(preds, target)`).
        Both are floating, so a swap cannot be detected: pass them by keyword when in doubt.
        """
        labels, predictions = (
            check_tensor("labels", labels),
            check_tensor("predictions", predictions),
        )
        if self.check_values:
            error_sum, bad_labels, bad_predictions = self._checked_sum(labels, predictions)
            self.record_errors(nonfinite_labels=bad_labels, nonfinite_predictions=bad_predictions)
        else:
            error_sum = self._batch_sum(labels, predictions)
        # The (1,) buffers themselves (a 0-d state read as `self.count` costs a failed
        # attribute lookup and __getattr__), and the count as a Python float: no tensor made
        # for it (an int into the float64 state takes a slower promoting path, ~1.7 µs).
        buffers = self._buffers
        buffers["error_sum"].add_(error_sum)  # type: ignore[union-attr]
        buffers["count"].add_(float(labels.numel()))  # type: ignore[union-attr]

    def compute(self) -> Tensor:
        return cast(Tensor, self.scale * self.error_sum / self.count)

    def _coalescible(self, args: tuple[Tensor, ...]) -> bool:
        return len(args) == 2  # an error sum and a count over elements


@final
class MSEMetric(_MeanErrorMetric):
    """Mean squared error over every element seen.

    Example:
        >>> float(MSEMetric()(torch.tensor([0.0, 2.0]), torch.tensor([1.0, 2.0])))
        0.5
    """

    input_kind = "regression"
    #: Display unit of its values (fractions shown ×100 for "%").
    unit = ""
    #: Whether a larger value is better (early stopping, best checkpoints).
    higher_is_better = False

    _batch_sum = staticmethod(squared_error_sum)

    @classmethod
    def _checked_sum(
        cls, labels: Tensor, predictions: Tensor
    ) -> tuple[Tensor, Tensor | None, Tensor | None]:
        return squared_error_sum_checked(labels, predictions)


@final
class MAEMetric(_MeanErrorMetric):
    """Mean absolute error over every element seen.

    Example:
        >>> float(MAEMetric()(torch.tensor([0.0, 2.0]), torch.tensor([1.0, 2.0])))
        0.5
    """

    input_kind = "regression"
    #: Display unit of its values (fractions shown ×100 for "%").
    unit = ""
    #: Whether a larger value is better (early stopping, best checkpoints).
    higher_is_better = False

    _batch_sum = staticmethod(absolute_error_sum)

    @classmethod
    def _checked_sum(
        cls, labels: Tensor, predictions: Tensor
    ) -> tuple[Tensor, Tensor | None, Tensor | None]:
        return absolute_error_sum_checked(labels, predictions)


@final
class SMAPEMetric(_MeanErrorMetric):
    """Symmetric mean absolute percentage error in percent (0 to 200) over every element.

    An element with prediction = label = 0 counts as a perfect 0 (NeuroBench reports such a
    batch as 200).

    Example:
        >>> float(SMAPEMetric()(torch.tensor([1.0, 0.0]), torch.tensor([3.0, 0.0])))
        50.0
    """

    input_kind = "regression"
    #: Display unit of its values (fractions shown ×100 for "%").
    unit = ""
    #: Whether a larger value is better (early stopping, best checkpoints).
    higher_is_better = False

    scale = 200.0
    _batch_sum = staticmethod(smape_sum)
