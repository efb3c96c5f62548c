"""`torchmetrics.regression.mse`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.regression import (
    MeanSquaredError,
)

__all__ = ["MeanSquaredError"]
