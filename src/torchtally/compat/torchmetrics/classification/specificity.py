"""`torchmetrics.classification.specificity`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.classification import (
    BinarySpecificity,
    MulticlassSpecificity,
    MultilabelSpecificity,
    Specificity,
)

__all__ = ["BinarySpecificity", "MulticlassSpecificity", "MultilabelSpecificity", "Specificity"]
