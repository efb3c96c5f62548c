"""`torchmetrics.classification.negative_predictive_value`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.classification import (
    BinaryNegativePredictiveValue,
    MulticlassNegativePredictiveValue,
    MultilabelNegativePredictiveValue,
    NegativePredictiveValue,
)

__all__ = [
    "BinaryNegativePredictiveValue",
    "MulticlassNegativePredictiveValue",
    "MultilabelNegativePredictiveValue",
    "NegativePredictiveValue",
]
