"""`AUCMetric`: cstorch's thresholded ROC-AUC / PR-AUC (TensorFlow's `metrics.auc`)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import final

import torch
from torch import Tensor

from torchtally._errors import ErrorKinds, check_choice
from torchtally.functional._checks import count_negative, count_nonfinite
from torchtally.functional.ranking._auc import (
    CURVES,
    SUMMATION_METHODS,
    auc_compute,
    auc_thresholds,
    auc_update,
    broadcast_weights,
)
from torchtally.metrics._base import Metric

__all__ = ["AUCMetric"]


@final
class AUCMetric(Metric):
    """Area under the ROC or PR curve at fixed thresholds (cstorch `AUCMetric`).

    Predictions in [0, 1] are compared with `num_thresholds` thresholds
    `[-1e-7, 1/(T-1), ..., (T-2)/(T-1), 1 + 1e-7]` (or `[-1e-7, *sorted(thresholds),
    1 + 1e-7]`); a prediction above a threshold is positive there. The AUC is a Riemann sum
    over consecutive thresholds (see `torchtally.functional.ranking._auc`): "interpolation"
    (trapezoids for ROC, Davis & Goadrich interpolation for PR), "minoring" or "majoring"
    (lower or upper bounds of the area). The state is a `(2, T + 1)` float64 histogram of
    label weight per threshold bucket: exactly additive over batches and ranks.

    Args:
        num_thresholds: T, at least 2 (ignored when `thresholds` is given).
        curve: "ROC" or "PR".
        name: Metric name; defaults to "auc" (third, as in cstorch's signature).
        summation_method: "interpolation", "minoring", "majoring", or TF's
            "careful_interpolation" (the same as "interpolation").
        thresholds: Optional inner thresholds in [0, 1].
        check_values: Count negative labels (any label > 0 is positive, as in cstorch),
            non-finite predictions, predictions outside [0, 1] and negative weights, and raise
            them at compute.

    Example:
        >>> metric = AUCMetric(num_thresholds=3)
        >>> metric(torch.tensor([0, 0, 1, 1]), torch.tensor([0.1, 0.6, 0.4, 0.9]))
        0.5
    """

    input_kind = "ranking"
    #: Display unit of its values (fractions shown ×100 for "%").
    unit = "%"
    #: Whether a larger value is better (early stopping, best checkpoints).
    higher_is_better = True
    result_dtype = float  # as cstorch

    array_inputs = ("labels", "predictions", "weights")
    error_kinds = ErrorKinds(
        negative_labels="negative labels",
        nonfinite_predictions="non-finite predictions",
        predictions_outside="predictions outside [0, 1]",
        negative_weights="negative weights",
        noninteger_labels="non-integer labels",
    )

    def __init__(
        self,
        num_thresholds: int = 200,
        curve: str = "ROC",
        name: str | None = None,
        summation_method: str = "interpolation",
        thresholds: Sequence[float] | None = None,
        *,
        check_values: bool = True,
    ) -> None:
        check_choice("curve", curve, CURVES)
        check_choice("summation_method", summation_method, SUMMATION_METHODS)
        grid = auc_thresholds(num_thresholds, thresholds)
        super().__init__(name, check_values=check_values)
        self.curve = curve
        self.summation_method = summation_method
        self.num_thresholds = grid.shape[0]
        self._threshold_values = tuple(grid.tolist())
        # A constant, identical on every rank, so the "max" reduction leaves it unchanged; a
        # registered state is restored by `reset` after `to_empty` and moves with `.to()`.
        self.register_state("thresholds", grid, reduction="max")
        histogram = torch.zeros(2, self.num_thresholds + 1, dtype=torch.float64)
        self.register_state("histogram", histogram)

    def shared_statistic(self) -> Hashable:
        """Equal for AUC metrics with the same thresholds (ROC and PR can share an update)."""
        return ("auc_histogram", self._threshold_values, self.check_values)

    def update(self, labels: Tensor, predictions: Tensor, weights: Tensor | None = None) -> None:
        """Add one batch.

        Args:
            labels: Binary labels (values > 0 are positive).
            predictions: Scores in [0, 1], shaped like `labels`.
            weights: Optional weights broadcastable to `labels`; 0 masks a value.
        """
        self.histogram.add_(auc_update(labels, predictions, self.thresholds, weights))
        if self.check_values:
            outside = torch.count_nonzero(torch.logical_or(predictions < 0, predictions > 1))
            self.record_errors(
                negative_labels=torch.count_nonzero(labels < 0),
                nonfinite_predictions=count_nonfinite(predictions),
                predictions_outside=outside,
                negative_weights=count_negative(broadcast_weights(weights, labels)),
                # cstorch takes integer labels: 0.5 is no class, not a soft label
                noninteger_labels=torch.count_nonzero(labels != labels.trunc())
                if labels.is_floating_point()
                else None,
            )

    def compute(self) -> Tensor:
        return auc_compute(self.histogram, self.curve, self.summation_method)

    def extra_repr(self) -> str:
        return (
            f"name={self.name!r}, num_thresholds={self.num_thresholds}, curve={self.curve!r}, "
            f"summation_method={self.summation_method!r}"
        )
