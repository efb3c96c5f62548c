"""`torchmetrics.classification.matthews_corrcoef`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.classification import (
    BinaryMatthewsCorrCoef,
    MatthewsCorrCoef,
    MulticlassMatthewsCorrCoef,
    MultilabelMatthewsCorrCoef,
)

__all__ = [
    "BinaryMatthewsCorrCoef",
    "MatthewsCorrCoef",
    "MulticlassMatthewsCorrCoef",
    "MultilabelMatthewsCorrCoef",
]
