"""`torchmetrics.clustering.normalized_mutual_info_score`: TorchMetrics' module path for this class."""

from torchtally.compat.torchmetrics.clustering import (
    NormalizedMutualInfoScore,
)

__all__ = ["NormalizedMutualInfoScore"]
