"""`torchmetrics.functional.classification.exact_match`: Exact match (see `_confmat`)."""

from torchtally.compat.torchmetrics.functional.classification._confmat import (
    exact_match,
    multiclass_exact_match,
    multilabel_exact_match,
)

__all__ = [
    "exact_match",
    "multiclass_exact_match",
    "multilabel_exact_match",
]
