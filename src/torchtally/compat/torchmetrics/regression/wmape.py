"""`torchmetrics.regression.wmape`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.regression import (
    WeightedMeanAbsolutePercentageError,
)

__all__ = ["WeightedMeanAbsolutePercentageError"]
