"""`torchmetrics.functional.classification.accuracy`: Accuracy (see `_confmat`)."""

from torchtally.compat.torchmetrics.functional.classification._confmat import (
    accuracy,
    binary_accuracy,
    multiclass_accuracy,
    multilabel_accuracy,
)

__all__ = [
    "accuracy",
    "binary_accuracy",
    "multiclass_accuracy",
    "multilabel_accuracy",
]
