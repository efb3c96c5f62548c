"""`torchmetrics.retrieval.auroc`: TorchMetrics' module path for this class."""

from torchtally.compat.torchmetrics.retrieval import RetrievalAUROC

__all__ = ["RetrievalAUROC"]
