"""`torchmetrics.clustering.rand_score`: TorchMetrics' module path for this class."""

from torchtally.compat.torchmetrics.clustering import (
    RandScore,
)

__all__ = ["RandScore"]
