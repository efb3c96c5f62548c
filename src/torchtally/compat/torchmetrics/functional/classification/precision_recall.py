"""`torchmetrics.functional.classification.precision_recall`: Precision and recall (see `_confmat`)."""

from torchtally.compat.torchmetrics.functional.classification._confmat import (
    binary_precision,
    binary_recall,
    multiclass_precision,
    multiclass_recall,
    multilabel_precision,
    multilabel_recall,
    precision,
    recall,
)

__all__ = [
    "binary_precision",
    "binary_recall",
    "multiclass_precision",
    "multiclass_recall",
    "multilabel_precision",
    "multilabel_recall",
    "precision",
    "recall",
]
