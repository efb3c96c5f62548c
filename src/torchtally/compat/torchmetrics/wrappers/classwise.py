"""`torchmetrics.wrappers.classwise`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.wrappers import (
    ClasswiseWrapper,
)

__all__ = ["ClasswiseWrapper"]
