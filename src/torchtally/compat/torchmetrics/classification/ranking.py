"""`torchmetrics.classification.ranking`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.classification import (
    MultilabelCoverageError,
    MultilabelRankingAveragePrecision,
    MultilabelRankingLoss,
)

__all__ = ["MultilabelCoverageError", "MultilabelRankingAveragePrecision", "MultilabelRankingLoss"]
