"""`torchmetrics.clustering.mutual_info_score`: TorchMetrics' module path for this class."""

from torchtally.compat.torchmetrics.clustering import (
    MutualInfoScore,
)

__all__ = ["MutualInfoScore"]
