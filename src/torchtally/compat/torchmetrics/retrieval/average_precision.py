"""`torchmetrics.retrieval.average_precision`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.retrieval import (
    RetrievalMAP,
)

__all__ = ["RetrievalMAP"]
