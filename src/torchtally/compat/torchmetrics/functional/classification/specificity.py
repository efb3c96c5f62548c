"""`torchmetrics.functional.classification.specificity`: Specificity (see `_confmat`)."""

from torchtally.compat.torchmetrics.functional.classification._confmat import (
    binary_specificity,
    multiclass_specificity,
    multilabel_specificity,
    specificity,
)

__all__ = [
    "binary_specificity",
    "multiclass_specificity",
    "multilabel_specificity",
    "specificity",
]
