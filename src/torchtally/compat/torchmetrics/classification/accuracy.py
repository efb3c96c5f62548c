"""`torchmetrics.classification.accuracy`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.classification import (
    Accuracy,
    BinaryAccuracy,
    MulticlassAccuracy,
    MultilabelAccuracy,
)

__all__ = ["Accuracy", "BinaryAccuracy", "MulticlassAccuracy", "MultilabelAccuracy"]
