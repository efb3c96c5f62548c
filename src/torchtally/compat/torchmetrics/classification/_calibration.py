"""TorchMetrics' calibration error with a constant-memory state.

TorchMetrics keeps every confidence in a list and bins them at compute; the binning is all the
value depends on, so here each update adds its per-bin count, confidence sum and accuracy sum
into three preallocated `(n_bins + 1,)` states (the extra slot holds confidence exactly 1.0, as
`bucketize(..., right=True) - 1` does in TorchMetrics). The value is the same. The binning and
the norms are the native `torchtally.functional.calibration` (`calibration_update` with
TorchMetrics' `bin_of_one`, `calibration_error_compute`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor

from torchtally._errors import ErrorKinds
from torchtally.compat.torchmetrics._base import Metric
from torchtally.functional.calibration import calibration_error_compute, calibration_update

__all__ = ["BinaryCalibrationError", "MulticlassCalibrationError"]

_NORMS = ("l1", "l2", "max")


class _CalibrationError(Metric):
    error_kinds = ErrorKinds(
        invalid_targets="targets that are neither a valid label nor ignore_index"
    )
    higher_is_better = False
    plot_lower_bound = 0.0
    is_differentiable = False

    def __init__(
        self,
        n_bins: int,
        norm: str,
        ignore_index: int | None,
        validate_args: bool,
        **kwargs: Any,
    ) -> None:
        if not isinstance(n_bins, int) or isinstance(n_bins, bool) or n_bins < 1:
            raise ValueError(
                f"Argument `n_bins` must be an integer >= 1. Received: n_bins={n_bins!r}"
            )
        if norm not in _NORMS:
            raise ValueError(f"Argument `norm` must be one of {_NORMS}. Received: norm={norm!r}")
        super().__init__(**kwargs)
        self.n_bins, self.norm = n_bins, norm
        self.ignore_index, self.validate_args = ignore_index, validate_args
        for name in ("count", "confidence", "accuracy"):
            self.register_state(name, torch.zeros(n_bins + 1, dtype=torch.float64), False, "sum")

    def _bins(
        self, confidences: Tensor, accuracies: Tensor, counted: Tensor, invalid: Tensor
    ) -> dict[str, Tensor]:
        # TorchMetrics' binning: edges in the scores' dtype and a bin of its own for 1.0
        table = calibration_update(
            confidences, accuracies, self.n_bins, counted.double(), bin_of_one=True
        )
        batch: dict[str, Any] = {"count": table[0], "confidence": table[1], "accuracy": table[2]}
        if self.validate_args:
            batch["_errors"] = {"invalid_targets": invalid}
        return batch

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        table = torch.stack([state["count"], state["confidence"], state["accuracy"]])
        return calibration_error_compute(table, self.norm).to(self.dtype)


class BinaryCalibrationError(_CalibrationError):
    """TorchMetrics' `BinaryCalibrationError`: scores (sigmoid if logits) against 0/1 targets."""

    def __init__(
        self,
        n_bins: int = 15,
        norm: str = "l1",
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(n_bins, norm, ignore_index, validate_args, **kwargs)

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        if (
            not isinstance(preds, Tensor)
            or not preds.is_floating_point()
            or preds.shape != target.shape
        ):
            raise ValueError(
                "Argument `preds` must be float scores shaped like `target` (order: "
                f"update(preds, target)). Received: preds {tuple(getattr(preds, 'shape', ()))}, "
                f"target {tuple(target.shape)}"
            )
        p, t = preds.reshape(-1), target.reshape(-1)
        binary = (t == 0) | (t == 1)
        ignored = torch.zeros_like(binary) if self.ignore_index is None else t == self.ignore_index
        counted = binary & ~ignored
        inside = (((p >= 0) & (p <= 1)) | ~counted).all()
        p = torch.where(inside, p, p.sigmoid())
        return self._bins(p, t.to(p.dtype), counted, (~binary & ~ignored).sum())


class MulticlassCalibrationError(_CalibrationError):
    """TorchMetrics' `MulticlassCalibrationError`: top-1 confidence (softmax if logits) against
    whether the top-1 class is the target."""

    def __init__(
        self,
        num_classes: int,
        n_bins: int = 15,
        norm: str = "l1",
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        if not isinstance(num_classes, int) or isinstance(num_classes, bool) or num_classes < 2:
            raise ValueError(
                f"Argument `num_classes` must be an integer >= 2. Received: num_classes={num_classes!r}"
            )
        super().__init__(n_bins, norm, ignore_index, validate_args, **kwargs)
        self.num_classes = num_classes

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        classes = self.num_classes
        if (
            not isinstance(preds, Tensor)
            or not preds.is_floating_point()
            or preds.dim() != target.dim() + 1
            or preds.shape[1] != classes
        ):
            raise ValueError(
                f"Argument `preds` must be float scores of shape (N, {classes}, ...) for target "
                f"(N, ...) (order: update(preds, target)). Received: preds "
                f"{tuple(getattr(preds, 'shape', ()))}, target {tuple(target.shape)}"
            )
        scores = preds.movedim(1, -1).reshape(-1, classes)
        t = target.reshape(-1).long()
        in_range = (t >= 0) & (t < classes)
        ignored = (
            torch.zeros_like(in_range) if self.ignore_index is None else t == self.ignore_index
        )
        counted = in_range & ~ignored
        inside = (((scores >= 0) & (scores <= 1)) | ~counted.unsqueeze(-1)).all()
        scores = torch.where(inside, scores, scores.softmax(-1))
        confidences, predicted = scores.max(dim=-1)
        accuracies = (predicted == t).to(confidences.dtype)
        return self._bins(confidences, accuracies, counted, (~in_range & ~ignored).sum())
