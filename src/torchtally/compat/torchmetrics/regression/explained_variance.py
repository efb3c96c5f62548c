"""`torchmetrics.regression.explained_variance`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.regression import (
    ExplainedVariance,
)

__all__ = ["ExplainedVariance"]
