"""`torchmetrics.classification.eer`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.classification import (
    EER,
    BinaryEER,
    MulticlassEER,
    MultilabelEER,
)

__all__ = ["EER", "BinaryEER", "MulticlassEER", "MultilabelEER"]
