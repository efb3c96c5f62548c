"""`torchmetrics.clustering.homogeneity_completeness_v_measure`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.clustering import (
    CompletenessScore,
    HomogeneityScore,
    VMeasureScore,
)

__all__ = ["CompletenessScore", "HomogeneityScore", "VMeasureScore"]
