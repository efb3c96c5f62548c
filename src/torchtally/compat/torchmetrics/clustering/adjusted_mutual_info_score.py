"""`torchmetrics.clustering.adjusted_mutual_info_score`: TorchMetrics' module path for this class."""

from torchtally.compat.torchmetrics.clustering import (
    AdjustedMutualInfoScore,
)

__all__ = ["AdjustedMutualInfoScore"]
