"""`torchmetrics.regression.csi`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.regression import (
    CriticalSuccessIndex,
)

__all__ = ["CriticalSuccessIndex"]
