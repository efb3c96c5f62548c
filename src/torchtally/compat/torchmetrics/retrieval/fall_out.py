"""`torchmetrics.retrieval.fall_out`: TorchMetrics' module path for this class."""

from torchtally.compat.torchmetrics.retrieval import RetrievalFallOut

__all__ = ["RetrievalFallOut"]
