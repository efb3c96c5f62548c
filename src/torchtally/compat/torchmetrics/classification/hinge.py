"""`torchmetrics.classification.hinge`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.classification import (
    BinaryHingeLoss,
    HingeLoss,
    MulticlassHingeLoss,
)

__all__ = ["BinaryHingeLoss", "HingeLoss", "MulticlassHingeLoss"]
