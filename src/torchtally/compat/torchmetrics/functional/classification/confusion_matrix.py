"""`torchmetrics.functional.classification.confusion_matrix`: Confusion matrix (see `_confmat`)."""

from torchtally.compat.torchmetrics.functional.classification._confmat import (
    binary_confusion_matrix,
    confusion_matrix,
    multiclass_confusion_matrix,
    multilabel_confusion_matrix,
)

__all__ = [
    "binary_confusion_matrix",
    "confusion_matrix",
    "multiclass_confusion_matrix",
    "multilabel_confusion_matrix",
]
