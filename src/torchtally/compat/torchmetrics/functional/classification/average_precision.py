"""`torchmetrics.functional.classification.average_precision`: Average precision (see `_curves`)."""

from torchtally.compat.torchmetrics.functional.classification._curves import (
    average_precision,
    binary_average_precision,
    multiclass_average_precision,
    multilabel_average_precision,
)

__all__ = [
    "average_precision",
    "binary_average_precision",
    "multiclass_average_precision",
    "multilabel_average_precision",
]
