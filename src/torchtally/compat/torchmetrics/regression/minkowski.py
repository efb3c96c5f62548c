"""`torchmetrics.regression.minkowski`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.regression import (
    MinkowskiDistance,
)

__all__ = ["MinkowskiDistance"]
