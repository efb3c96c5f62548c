"""`torchmetrics.clustering.cluster_accuracy`: TorchMetrics' module path for this class."""

from torchtally.compat.torchmetrics.clustering import (
    ClusterAccuracy,
)

__all__ = ["ClusterAccuracy"]
