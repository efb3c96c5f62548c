"""`torchmetrics.functional.classification.auroc`: Area under the ROC (see `_curves`)."""

from torchtally.compat.torchmetrics.functional.classification._curves import (
    auroc,
    binary_auroc,
    multiclass_auroc,
    multilabel_auroc,
)

__all__ = [
    "auroc",
    "binary_auroc",
    "multiclass_auroc",
    "multilabel_auroc",
]
