"""`torchmetrics.functional.classification.precision_recall_curve`: Precision-recall curve (see `_curves`)."""

from torchtally.compat.torchmetrics.functional.classification._curves import (
    binary_precision_recall_curve,
    multiclass_precision_recall_curve,
    multilabel_precision_recall_curve,
    precision_recall_curve,
)

__all__ = [
    "binary_precision_recall_curve",
    "multiclass_precision_recall_curve",
    "multilabel_precision_recall_curve",
    "precision_recall_curve",
]
