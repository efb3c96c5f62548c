"""`torchmetrics.regression.rse`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.regression import (
    RelativeSquaredError,
)

__all__ = ["RelativeSquaredError"]
