"""`torchmetrics.regression.kendall`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.regression import (
    KendallRankCorrCoef,
)

__all__ = ["KendallRankCorrCoef"]
