"""`torchmetrics.classification.jaccard`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.classification import (
    BinaryJaccardIndex,
    JaccardIndex,
    MulticlassJaccardIndex,
    MultilabelJaccardIndex,
)

__all__ = ["BinaryJaccardIndex", "JaccardIndex", "MulticlassJaccardIndex", "MultilabelJaccardIndex"]
