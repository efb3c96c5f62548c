"""`torchmetrics.regression.kl_divergence`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.regression import (
    KLDivergence,
)

__all__ = ["KLDivergence"]
