"""`torchmetrics.regression.js_divergence`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.regression import (
    JensenShannonDivergence,
)

__all__ = ["JensenShannonDivergence"]
