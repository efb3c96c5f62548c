"""`torchmetrics.regression.mape`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.regression import (
    MeanAbsolutePercentageError,
)

__all__ = ["MeanAbsolutePercentageError"]
