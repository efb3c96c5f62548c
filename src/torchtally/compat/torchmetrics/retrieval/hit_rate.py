"""`torchmetrics.retrieval.hit_rate`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.retrieval import (
    RetrievalHitRate,
)

__all__ = ["RetrievalHitRate"]
