"""`torchmetrics.clustering.dunn_index`: TorchMetrics' module path for this class."""

from torchtally.compat.torchmetrics.clustering import (
    DunnIndex,
)

__all__ = ["DunnIndex"]
