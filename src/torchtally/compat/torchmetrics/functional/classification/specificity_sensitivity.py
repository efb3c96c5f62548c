"""`torchmetrics.functional.classification.specificity_sensitivity`: Specificity at a fixed sensitivity (see `_curves`)."""

from torchtally.compat.torchmetrics.functional.classification._curves import (
    _convert_fpr_to_specificity,  # noqa: F401  (TorchMetrics has it here; its tests import it)
    binary_specificity_at_sensitivity,
    multiclass_specificity_at_sensitivity,
    multilabel_specificity_at_sensitivity,
    specificity_at_sensitivity,
)

__all__ = [
    "binary_specificity_at_sensitivity",
    "multiclass_specificity_at_sensitivity",
    "multilabel_specificity_at_sensitivity",
    "specificity_at_sensitivity",
]
