"""`torchmetrics.clustering.calinski_harabasz_score`: TorchMetrics' module path for this class."""

from torchtally.compat.torchmetrics.clustering import (
    CalinskiHarabaszScore,
)

__all__ = ["CalinskiHarabaszScore"]
