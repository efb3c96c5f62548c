"""`torchmetrics.functional.classification.cohen_kappa`: Cohen's kappa (see `_confmat`)."""

from torchtally.compat.torchmetrics.functional.classification._confmat import (
    binary_cohen_kappa,
    cohen_kappa,
    multiclass_cohen_kappa,
)

__all__ = [
    "binary_cohen_kappa",
    "cohen_kappa",
    "multiclass_cohen_kappa",
]
