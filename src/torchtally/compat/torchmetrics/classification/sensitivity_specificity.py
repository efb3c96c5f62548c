"""`torchmetrics.classification.sensitivity_specificity`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.classification import (
    BinarySensitivityAtSpecificity,
    MulticlassSensitivityAtSpecificity,
    MultilabelSensitivityAtSpecificity,
    SensitivityAtSpecificity,
)

__all__ = [
    "BinarySensitivityAtSpecificity",
    "MulticlassSensitivityAtSpecificity",
    "MultilabelSensitivityAtSpecificity",
    "SensitivityAtSpecificity",
]
