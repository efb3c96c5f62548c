"""`torchmetrics.classification.calibration_error`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.classification import (
    BinaryCalibrationError,
    CalibrationError,
    MulticlassCalibrationError,
)

__all__ = ["BinaryCalibrationError", "CalibrationError", "MulticlassCalibrationError"]
