"""`torchmetrics.retrieval.reciprocal_rank`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.retrieval import (
    RetrievalMRR,
)

__all__ = ["RetrievalMRR"]
