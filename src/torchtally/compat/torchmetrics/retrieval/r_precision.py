"""`torchmetrics.retrieval.r_precision`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.retrieval import (
    RetrievalRPrecision,
)

__all__ = ["RetrievalRPrecision"]
