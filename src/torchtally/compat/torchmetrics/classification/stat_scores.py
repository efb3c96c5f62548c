"""`torchmetrics.classification.stat_scores`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.classification import (
    BinaryStatScores,
    MulticlassStatScores,
    MultilabelStatScores,
    StatScores,
)

__all__ = ["BinaryStatScores", "MulticlassStatScores", "MultilabelStatScores", "StatScores"]
