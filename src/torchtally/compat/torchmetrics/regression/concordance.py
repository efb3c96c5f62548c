"""`torchmetrics.regression.concordance`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.regression import (
    ConcordanceCorrCoef,
)

__all__ = ["ConcordanceCorrCoef"]
