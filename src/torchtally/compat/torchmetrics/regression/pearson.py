"""`torchmetrics.regression.pearson`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.regression import (
    PearsonCorrCoef,
)

__all__ = ["PearsonCorrCoef"]
