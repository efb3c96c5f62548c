"""`torchmetrics.classification.roc`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.classification import (
    ROC,
    BinaryROC,
    MulticlassROC,
    MultilabelROC,
)

__all__ = ["ROC", "BinaryROC", "MulticlassROC", "MultilabelROC"]
