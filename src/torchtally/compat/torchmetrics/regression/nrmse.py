"""`torchmetrics.regression.nrmse`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.regression import (
    NormalizedRootMeanSquaredError,
)

__all__ = ["NormalizedRootMeanSquaredError"]
