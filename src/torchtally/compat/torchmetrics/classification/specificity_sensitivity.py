"""`torchmetrics.classification.specificity_sensitivity`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.classification import (
    BinarySpecificityAtSensitivity,
    MulticlassSpecificityAtSensitivity,
    MultilabelSpecificityAtSensitivity,
    SpecificityAtSensitivity,
)

__all__ = [
    "BinarySpecificityAtSensitivity",
    "MulticlassSpecificityAtSensitivity",
    "MultilabelSpecificityAtSensitivity",
    "SpecificityAtSensitivity",
]
