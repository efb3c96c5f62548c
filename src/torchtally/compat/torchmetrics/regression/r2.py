"""`torchmetrics.regression.r2`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.regression import (
    R2Score,
)

__all__ = ["R2Score"]
