"""`torchmetrics.functional.classification.negative_predictive_value`: Negative predictive value (see `_confmat`)."""

from torchtally.compat.torchmetrics.functional.classification._confmat import (
    binary_negative_predictive_value,
    multiclass_negative_predictive_value,
    multilabel_negative_predictive_value,
    negative_predictive_value,
)

__all__ = [
    "binary_negative_predictive_value",
    "multiclass_negative_predictive_value",
    "multilabel_negative_predictive_value",
    "negative_predictive_value",
]
