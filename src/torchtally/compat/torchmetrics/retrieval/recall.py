"""`torchmetrics.retrieval.recall`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.retrieval import (
    RetrievalRecall,
)

__all__ = ["RetrievalRecall"]
