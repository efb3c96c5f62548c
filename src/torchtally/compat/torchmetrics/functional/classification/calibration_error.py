"""`torchmetrics.functional.classification.calibration_error`: Calibration error (see `_scores`)."""

from torchtally.compat.torchmetrics.functional.classification._scores import (
    binary_calibration_error,
    calibration_error,
    multiclass_calibration_error,
)

__all__ = [
    "binary_calibration_error",
    "calibration_error",
    "multiclass_calibration_error",
]
