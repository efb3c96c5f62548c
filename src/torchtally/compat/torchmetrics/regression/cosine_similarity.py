"""`torchmetrics.regression.cosine_similarity`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.regression import (
    CosineSimilarity,
)

__all__ = ["CosineSimilarity"]
