"""`torchmetrics.retrieval.precision`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.retrieval import (
    RetrievalPrecision,
)

__all__ = ["RetrievalPrecision"]
