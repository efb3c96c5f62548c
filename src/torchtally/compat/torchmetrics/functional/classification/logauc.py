"""`torchmetrics.functional.classification.logauc`: Log AUC (see `_curves`)."""

from torchtally.compat.torchmetrics.functional.classification._curves import (
    binary_logauc,
    logauc,
    multiclass_logauc,
    multilabel_logauc,
)

__all__ = [
    "binary_logauc",
    "logauc",
    "multiclass_logauc",
    "multilabel_logauc",
]
