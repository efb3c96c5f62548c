"""`TopKAccuracyMetric`: Burn's top-k accuracy, accumulated over batches."""

from __future__ import annotations

from collections.abc import Hashable
from typing import final

import torch
from torch import Tensor

from torchtally._errors import ErrorKinds, check_int
from torchtally.functional.classification._top_k_accuracy import (
    top_k_accuracy_compute,
    top_k_accuracy_counts,
    top_k_accuracy_errors,
    top_k_accuracy_update,
)
from torchtally.metrics._base import Metric

__all__ = ["TopKAccuracyMetric"]


@final
class TopKAccuracyMetric(Metric):
    """Fraction of samples whose label is among their `k` highest scores, as scikit-learn's
    `top_k_accuracy_score`.

    Ties are broken as scikit-learn does: among equal scores the higher class index ranks
    first (so with all scores equal, only the `k` highest classes are hits). With `weights`
    it is the weighted mean of the hits (scikit-learn's `sample_weight`; with 0/1 weights, the
    plain mean over the weight-1 samples). NaN before any sample.

    Args:
        k: How many of the highest scores count as a hit (>= 1; k >= num_classes always hits).
        name: Metric name; defaults to "top_k_accuracy".
        check_values: Count labels outside `[0, num_classes)`, non-finite scores and negative
            weights and raise them at compute.

    Example:
        >>> top2 = TopKAccuracyMetric(2)
        >>> top2(torch.tensor([2, 0]), torch.tensor([[0.5, 0.2, 0.3], [0.1, 0.6, 0.3]]))
        tensor(0.5000, dtype=torch.float64)
    """

    input_kind = "classification"
    #: Display unit of its values (fractions shown ×100 for "%").
    unit = "%"
    #: Whether a larger value is better (early stopping, best checkpoints).
    higher_is_better = True

    error_kinds = ErrorKinds(
        invalid_labels="labels outside [0, num_classes)",
        nonfinite_predictions="non-finite predictions",
        negative_weights="negative weights",
        nonfinite_weights="NaN or infinite weights",
    )

    def __init__(self, k: int, name: str | None = None, *, check_values: bool = True) -> None:
        check_int("k", k, 1)
        super().__init__(name, check_values=check_values)
        self.k = k
        self.register_state("hits", torch.zeros((), dtype=torch.float64))
        self.register_state("total", torch.zeros((), dtype=torch.float64))

    def shared_statistic(self) -> Hashable:
        """`("top_k_hits", k, check_values)`."""
        return ("top_k_hits", self.k, self.check_values)

    def update(self, labels: Tensor, predictions: Tensor, weights: Tensor | None = None) -> None:
        """Count one batch.

        Args:
            labels: Integer class indices of any shape.
            predictions: Scores or logits of shape `labels.shape + (num_classes,)`.
            weights: Optional sample weights shaped like `labels`.
        """
        # The (1,) buffers themselves: a 0-d state read as `self.hits` costs a failed attribute
        # lookup, __getattr__ and a view check per call.
        buffers = self._buffers
        if weights is None:
            counts, valid, errors = top_k_accuracy_counts(
                labels, predictions, self.k, self.check_values
            )
            if errors is not None:
                self.record_errors(**errors)
            buffers["hits"].add_(counts)  # type: ignore[union-attr]
            buffers["total"].add_(valid)  # type: ignore[union-attr]
            return
        hits, total = top_k_accuracy_update(labels, predictions, self.k, weights)
        if self.check_values:
            self.record_errors(**top_k_accuracy_errors(labels, predictions, weights))
        buffers["hits"].add_(hits)  # type: ignore[union-attr]
        buffers["total"].add_(total)  # type: ignore[union-attr]

    def compute(self) -> Tensor:
        return top_k_accuracy_compute(self.hits, self.total)

    def extra_repr(self) -> str:
        return f"name={self.name!r}, k={self.k}"

    def _coalescible(self, args: tuple[Tensor, ...]) -> bool:
        return len(args) in (2, 3)  # hits and totals are sums over rows
