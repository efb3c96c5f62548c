"""`torchmetrics.regression.symmetric_mape`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.regression import (
    SymmetricMeanAbsolutePercentageError,
)

__all__ = ["SymmetricMeanAbsolutePercentageError"]
