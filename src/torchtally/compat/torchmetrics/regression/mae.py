"""`torchmetrics.regression.mae`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.regression import (
    MeanAbsoluteError,
)

__all__ = ["MeanAbsoluteError"]
