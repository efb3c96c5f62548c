"""`torchmetrics.clustering.adjusted_rand_score`: TorchMetrics' module path for this class."""

from torchtally.compat.torchmetrics.clustering import (
    AdjustedRandScore,
)

__all__ = ["AdjustedRandScore"]
