"""`torchmetrics.regression.spearman`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.regression import (
    SpearmanCorrCoef,
)

__all__ = ["SpearmanCorrCoef"]
