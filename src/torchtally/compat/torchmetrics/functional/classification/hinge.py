"""`torchmetrics.functional.classification.hinge`: Hinge loss (see `_scores`)."""

from torchtally.compat.torchmetrics.functional.classification._scores import (
    binary_hinge_loss,
    hinge_loss,
    multiclass_hinge_loss,
)

__all__ = [
    "binary_hinge_loss",
    "hinge_loss",
    "multiclass_hinge_loss",
]
