"""`torchmetrics.functional.classification.recall_fixed_precision`: Recall at a fixed precision (see `_curves`)."""

from torchtally.compat.torchmetrics.functional.classification._curves import (
    binary_recall_at_fixed_precision,
    multiclass_recall_at_fixed_precision,
    multilabel_recall_at_fixed_precision,
    recall_at_fixed_precision,
)

__all__ = [
    "binary_recall_at_fixed_precision",
    "multiclass_recall_at_fixed_precision",
    "multilabel_recall_at_fixed_precision",
    "recall_at_fixed_precision",
]
