"""`torchmetrics.retrieval.ndcg`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.retrieval import (
    RetrievalNormalizedDCG,
)

__all__ = ["RetrievalNormalizedDCG"]
