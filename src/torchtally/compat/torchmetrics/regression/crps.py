"""`torchmetrics.regression.crps`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.regression import (
    ContinuousRankedProbabilityScore,
)

__all__ = ["ContinuousRankedProbabilityScore"]
