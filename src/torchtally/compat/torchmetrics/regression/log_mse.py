"""`torchmetrics.regression.log_mse`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.regression import (
    MeanSquaredLogError,
)

__all__ = ["MeanSquaredLogError"]
