"""`torchmetrics.clustering.davies_bouldin_score`: TorchMetrics' module path for this class."""

from torchtally.compat.torchmetrics.clustering import (
    DaviesBouldinScore,
)

__all__ = ["DaviesBouldinScore"]
