"""`AccuracyMetric`: cstorch's accuracy, accumulated over batches."""

from __future__ import annotations

import warnings
from collections.abc import Hashable
from typing import final

import torch
from torch import Tensor

from torchtally.functional._checks import count_negative
from torchtally.functional.classification._accuracy import (
    accuracy_compute,
    accuracy_update,
    accuracy_update_checked,
)
from torchtally.metrics._base import Metric

__all__ = ["AccuracyMetric"]


@final
class AccuracyMetric(Metric):
    """Fraction of predictions equal to their labels (cstorch `AccuracyMetric`).

    Args:
        name: Metric name; defaults to "accuracy".
        threshold: Decision threshold when predictions are binary scores.
        check_values: Count untrustworthy predictions (rows of class scores whose maximum is
            NaN or infinite, non-finite binary scores) and negative weights, and raise them at
            compute.

    Example:
        >>> acc = AccuracyMetric("accuracy")
        >>> acc(labels=torch.tensor([0, 1, 1]), predictions=torch.tensor([0, 1, 0]))
        tensor(0.6667, dtype=torch.float64)
    """

    #: Display unit of its values (fractions shown ×100 for "%").
    unit = "%"
    #: Whether a larger value is better (early stopping, best checkpoints).
    higher_is_better = True
    result_dtype = torch.float32  # as cstorch

    error_kinds = ("non-finite predictions", "negative weights")

    def __init__(
        self, name: str | None = None, *, threshold: float = 0.5, check_values: bool = True
    ) -> None:
        super().__init__(name, check_values=check_values)
        self.threshold = float(threshold)
        self.register_state("correct", torch.zeros((), dtype=torch.float64))
        self.register_state("total", torch.zeros((), dtype=torch.float64))

    def update(self, labels: Tensor, predictions: Tensor, weights: Tensor | None = None) -> None:
        """Count one batch.

        Args:
            labels: Class indices.
            predictions: Class indices, binary scores, or class scores with a trailing class dim.
            weights: Optional weights shaped like `labels`; the denominator counts weights > 0.
                Integer predictions of another shape but as many elements as `labels` (e.g.
                `(B, 1)` for `(B,)`) are reshaped to it with a warning, as cstorch does.
        """
        if (
            not predictions.is_floating_point()
            and predictions.shape != labels.shape
            and predictions.numel() == labels.numel()
        ):
            warnings.warn(
                "AccuracyMetric: `predictions` of shape "
                f"{tuple(predictions.shape)} reshaped to the shape of `labels`, "
                f"{tuple(labels.shape)}, as cstorch does.",
                stacklevel=3,
            )
            predictions = predictions.reshape(labels.shape)
        if self.check_values:
            correct, total, nonfinite = accuracy_update_checked(
                labels, predictions, weights, self.threshold
            )
            self._record_errors(nonfinite, count_negative(weights))
        else:
            correct, total = accuracy_update(labels, predictions, weights, self.threshold)
        self.correct.add_(correct)
        self.total.add_(total)

    def compute(self) -> Tensor:
        return accuracy_compute(self.correct, self.total)

    # In a collection, accuracy is read off a multiclass confusion statistic instead of being
    # updated on its own. cstorch's weighting (denominator = count of positive weights) cannot
    # be read off weighted counts, so such a collection refuses `weights`.
    derived_supports_weights = False

    def derives_from(self, statistic: Hashable) -> bool:
        return (
            isinstance(statistic, tuple)
            and len(statistic) == 5
            and statistic[0] in ("class_counts", "confusion_matrix")
            and statistic[1] == "multiclass"
            and statistic[3] == self.threshold
        )

    def load_derived(self, source: Metric) -> None:
        if "class_counts" in source.state_names():
            counts = source.class_counts
            correct, total = counts[0].sum(), counts[2].sum()
        else:
            matrix = source.confusion_matrix
            correct, total = matrix.diagonal().sum(), matrix.sum()
        self.correct.copy_(correct)
        self.total.copy_(total)
