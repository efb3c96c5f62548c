"""`CalibrationErrorMetric`: ECE / MCE / RMS calibration error in constant memory."""

from __future__ import annotations

from collections.abc import Hashable
from typing import final

import torch
from torch import Tensor

from torchtally._errors import ErrorKinds, check_choice, check_int
from torchtally.functional._checks import count_negative, count_nonfinite, count_outside
from torchtally.functional.calibration._calibration import (
    NORMS,
    calibration_confidences,
    calibration_error_compute,
    calibration_update,
    reliability_diagram,
)
from torchtally.metrics._base import Metric

__all__ = ["CalibrationErrorMetric"]


@final
class CalibrationErrorMetric(Metric):
    """Top-label calibration error over uniform confidence bins (TorchMetrics'
    `BinaryCalibrationError` / `MulticlassCalibrationError`), with a constant-size state.

    The state is a `(3, n_bins)` float64 table (bin weight, summed confidence, summed
    accuracy) updated by three `scatter_add_`: no list of samples, exactly additive over batches
    and ranks. Bins are `[i/n, (i+1)/n)`, the last one closed, so a confidence of 1.0 counts in
    the last bin (TorchMetrics 1.9 puts it in a bin of its own). `norm` picks ECE ("l1"), MCE
    ("max") or RMS ("l2"); `reliability_diagram()` returns the per-bin data for a plot.
    Probabilities are used as given: pass `from_logits=True` for logits (TorchMetrics decides by
    looking at the values, a host sync). NaN before any sample.

    Args:
        num_classes: None for binary (probability of class 1 per element), else the number of
            classes (`(N, num_classes)` scores, `(N,)` targets).
        n_bins: Number of equal-width bins over [0, 1] (TorchMetrics' default 15).
        norm: "l1" (ECE, default), "max" (MCE) or "l2" (RMS calibration error).
        from_logits: Apply a sigmoid (binary) or softmax (multiclass) to `preds` first.
        ignore_index: Samples whose target equals it are left out.
        name: Metric name; defaults to "calibration_error".
        check_values: Count non-finite scores, probabilities outside [0, 1], invalid
            targets and negative weights; raise them at compute. Multiclass scores are
            counted by row (one pass over the scores instead of four).

    Example:
        >>> metric = CalibrationErrorMetric(n_bins=2)
        >>> metric(torch.tensor([0.25, 0.25, 0.55, 0.75, 0.75]), torch.tensor([0, 0, 1, 1, 1]))
        tensor(0.2900, dtype=torch.float64)
    """

    unit = ""
    higher_is_better = False
    input_kind = "scores"
    error_kinds = ErrorKinds(
        nonfinite_predictions="non-finite predictions",
        probabilities_outside="probabilities outside [0, 1]",
        invalid_targets="invalid targets",
        negative_weights="negative weights",
    )

    def __init__(
        self,
        num_classes: int | None = None,
        n_bins: int = 15,
        norm: str = "l1",
        *,
        from_logits: bool = False,
        ignore_index: int | None = None,
        name: str | None = None,
        check_values: bool = True,
    ) -> None:
        check_int("num_classes", num_classes, 2, allow_none=True)
        check_int("n_bins", n_bins, 1)
        check_choice("norm", norm, NORMS)
        if ignore_index is not None and (
            isinstance(ignore_index, bool) or not isinstance(ignore_index, int)
        ):
            raise ValueError(
                "Argument `ignore_index` must be an integer or None. "
                f"Received: ignore_index={ignore_index!r}"
            )
        super().__init__(name, check_values=check_values)
        self.num_classes = num_classes
        self.n_bins = n_bins
        self.norm = norm
        self.from_logits = from_logits
        self.ignore_index = ignore_index
        table = torch.zeros(3, n_bins, dtype=torch.float64)
        self.register_state("table", table)

    def shared_statistic(self) -> Hashable:
        """ECE, MCE and RMS of the same inputs share one update."""
        return (
            "calibration",
            self.num_classes,
            self.n_bins,
            self.from_logits,
            self.ignore_index,
            self.check_values,
        )

    def update(self, preds: Tensor, target: Tensor, weights: Tensor | None = None) -> None:
        """Add one batch.

        Args:
            preds: Binary: probabilities of class 1, any shape. Multiclass: `(N, num_classes)`
                probabilities. Logits with `from_logits=True`.
            target: Binary: 0/1 labels shaped like `preds`. Multiclass: `(N,)` class indices.
            weights: Optional scalar or per-sample weights; 0 masks a sample.
        """
        confidence, accuracy = calibration_confidences(
            preds, target, self.num_classes, from_logits=self.from_logits
        )
        keep = None
        if self.ignore_index is not None:
            keep = target.reshape(-1) != self.ignore_index
            if weights is not None and weights.dim() and weights.numel() != confidence.numel():
                raise ValueError(
                    "Argument `weights` must be a scalar or hold one weight per sample "
                    f"({confidence.numel()}). Received: weights.shape={tuple(weights.shape)}"
                )
            base = torch.ones_like(confidence) if weights is None else weights
            weights = torch.where(keep, base.to(torch.float64).reshape(-1), 0.0)
        self.table.add_(calibration_update(confidence, accuracy, self.n_bins, weights))
        if self.check_values:
            labels = target if keep is None else torch.where(keep.reshape(target.shape), target, 0)
            high = 2 if self.num_classes is None else self.num_classes
            if self.num_classes is None:
                nonfinite = count_nonfinite(preds)
                outside = torch.count_nonzero(torch.logical_or(preds < 0, preds > 1))
            else:
                # Per row, from the row maxima already taken (NaN propagates into them) and
                # one pass for the minima, instead of four passes over every score.
                nonfinite = count_nonfinite(confidence)
                low = preds.amin(-1) if preds.numel() else preds.new_zeros(0)
                outside = torch.count_nonzero(torch.logical_or(confidence > 1, low < 0))
            self.record_errors(
                nonfinite_predictions=nonfinite,
                probabilities_outside=None if self.from_logits else outside,
                invalid_targets=count_outside(labels, 0, high),
                negative_weights=count_negative(weights),
            )

    def compute(self) -> Tensor:
        return calibration_error_compute(self.table, self.norm)

    def reliability_diagram(self) -> dict[str, Tensor]:
        """Per-bin data for a reliability diagram (over every rank when distributed):
        `edges` `(n_bins + 1,)`, and per bin the mean `confidence` and `accuracy` (NaN when
        empty) and the `weight` (sample count, or summed weights)."""
        with self.synced():
            self.check_errors()
            return reliability_diagram(self.table)

    def extra_repr(self) -> str:
        return (
            f"name={self.name!r}, num_classes={self.num_classes}, n_bins={self.n_bins}, "
            f"norm={self.norm!r}"
        )
