"""`torchmetrics.functional.classification.roc`: ROC (see `_curves`)."""

from torchtally.compat.torchmetrics.functional.classification._curves import (
    binary_roc,
    multiclass_roc,
    multilabel_roc,
    roc,
)

__all__ = [
    "binary_roc",
    "multiclass_roc",
    "multilabel_roc",
    "roc",
]
