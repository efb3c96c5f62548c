"""`torchmetrics.classification.average_precision`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.classification import (
    AveragePrecision,
    BinaryAveragePrecision,
    MulticlassAveragePrecision,
    MultilabelAveragePrecision,
)

__all__ = [
    "AveragePrecision",
    "BinaryAveragePrecision",
    "MulticlassAveragePrecision",
    "MultilabelAveragePrecision",
]
