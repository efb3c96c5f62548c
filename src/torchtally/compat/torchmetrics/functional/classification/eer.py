"""`torchmetrics.functional.classification.eer`: Equal error rate (see `_curves`)."""

from torchtally.compat.torchmetrics.functional.classification._curves import (
    binary_eer,
    eer,
    multiclass_eer,
    multilabel_eer,
)

__all__ = [
    "binary_eer",
    "eer",
    "multiclass_eer",
    "multilabel_eer",
]
