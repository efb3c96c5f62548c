"""`torchmetrics.classification.precision_fixed_recall`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.classification import (
    BinaryPrecisionAtFixedRecall,
    MulticlassPrecisionAtFixedRecall,
    MultilabelPrecisionAtFixedRecall,
    PrecisionAtFixedRecall,
)

__all__ = [
    "BinaryPrecisionAtFixedRecall",
    "MulticlassPrecisionAtFixedRecall",
    "MultilabelPrecisionAtFixedRecall",
    "PrecisionAtFixedRecall",
]
