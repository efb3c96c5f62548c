"""`torchmetrics.classification.auroc`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.classification import (
    AUROC,
    BinaryAUROC,
    MulticlassAUROC,
    MultilabelAUROC,
)

__all__ = ["AUROC", "BinaryAUROC", "MulticlassAUROC", "MultilabelAUROC"]
