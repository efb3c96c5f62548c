"""`R2ScoreMetric`: R² accumulated exactly across batches (never averaged per batch)."""

from __future__ import annotations

from typing import final

import torch
from torch import Tensor

from torchtally._errors import ErrorKinds, check_choice, check_int
from torchtally.functional._checks import check_tensor
from torchtally.functional.regression._r2 import MULTIOUTPUT, add_r2_gram, gram_sums, r2_compute
from torchtally.metrics._base import Metric

__all__ = ["R2ScoreMetric"]


@final
class R2ScoreMetric(Metric):
    """Coefficient of determination over every sample seen.

    Args:
        num_outputs: Number of regression outputs; labels are `(N,)` when 1, else
            `(N, num_outputs)`.
        multioutput: "uniform_average", "raw_values" or "variance_weighted" (scikit-learn's).
        name: Metric name; defaults to "r2_score".
        check_values: Count non-finite labels/predictions and raise them at compute.

    Example:
        >>> r2 = R2ScoreMetric()
        >>> r2.update(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0]))
        >>> float(r2(torch.tensor([3.0]), torch.tensor([4.0])))
        0.5
    """

    input_kind = "regression"
    #: Display unit of its values (fractions shown ×100 for "%").
    unit = ""
    #: Whether a larger value is better (early stopping, best checkpoints).
    higher_is_better = True

    error_kinds = ErrorKinds(
        nonfinite_labels="non-finite labels",
        nonfinite_predictions="non-finite predictions",
    )
    array_inputs = ("labels", "predictions")

    def __init__(
        self,
        num_outputs: int = 1,
        multioutput: str = "uniform_average",
        name: str | None = None,
        *,
        check_values: bool = True,
    ) -> None:
        check_int("num_outputs", num_outputs, 1)
        check_choice("multioutput", multioutput, MULTIOUTPUT)
        super().__init__(name, check_values=check_values)
        self.num_outputs = num_outputs
        self.multioutput = multioutput
        # Per output, the Gram matrix of the rows [y, 1, p - y]: n, Σy, Σy², Σ(p - y)² (what
        # R² needs) and Σ(p - y), Σy(p - y), all added by one matrix product per update.
        self.register_state("gram", torch.zeros(num_outputs, 3, 3, dtype=torch.float64))

    def update(self, labels: Tensor, predictions: Tensor) -> None:
        """Add one batch of targets and predictions (same shape).

        The order is `(labels, predictions)`, cstorch's (TorchMetrics' is `(preds, target)`).
        Both are floating, so a swap cannot be detected: pass them by keyword when in doubt.
        """
        labels, predictions = (
            check_tensor("labels", labels),
            check_tensor("predictions", predictions),
        )
        rows = labels.shape[0] if labels.dim() else 0
        expected = (rows,) if self.num_outputs == 1 else (rows, self.num_outputs)
        if tuple(labels.shape) != expected:
            raise ValueError(
                f"Argument `labels` must have shape (N,) for num_outputs=1 or (N, num_outputs). "
                f"Received: labels.shape={tuple(labels.shape)}, num_outputs={self.num_outputs}"
            )
        gram: Tensor = self._buffers["gram"]  # type: ignore[assignment]
        counts = add_r2_gram(gram, labels, predictions, checked=self.check_values)
        if self.check_values:
            self.record_errors(nonfinite_labels=counts[0], nonfinite_predictions=counts[1])

    @property
    def sum_y(self) -> Tensor:
        """Σy per output (a view of the state `gram`)."""
        return gram_sums(self.gram)[0]

    @property
    def sum_y2(self) -> Tensor:
        """Σy² per output (a view of the state `gram`)."""
        return gram_sums(self.gram)[1]

    @property
    def sum_squared_error(self) -> Tensor:
        """Σ(p - y)² per output (a view of the state `gram`)."""
        return gram_sums(self.gram)[2]

    @property
    def count(self) -> Tensor:
        """Samples seen (a 0-d view of the state `gram`)."""
        return gram_sums(self.gram)[3]

    def compute(self) -> Tensor:
        return r2_compute(*gram_sums(self.gram), self.multioutput)

    def _coalescible(self, args: tuple[Tensor, ...]) -> bool:
        return len(args) == 2  # sums over rows
