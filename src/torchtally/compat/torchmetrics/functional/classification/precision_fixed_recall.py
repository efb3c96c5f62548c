"""`torchmetrics.functional.classification.precision_fixed_recall`: Precision at a fixed recall (see `_curves`)."""

from torchtally.compat.torchmetrics.functional.classification._curves import (
    binary_precision_at_fixed_recall,
    multiclass_precision_at_fixed_recall,
    multilabel_precision_at_fixed_recall,
    precision_at_fixed_recall,
)

__all__ = [
    "binary_precision_at_fixed_recall",
    "multiclass_precision_at_fixed_recall",
    "multilabel_precision_at_fixed_recall",
    "precision_at_fixed_recall",
]
