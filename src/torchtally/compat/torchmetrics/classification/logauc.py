"""`torchmetrics.classification.logauc`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.classification import (
    BinaryLogAUC,
    LogAUC,
    MulticlassLogAUC,
    MultilabelLogAUC,
)

__all__ = ["BinaryLogAUC", "LogAUC", "MulticlassLogAUC", "MultilabelLogAUC"]
