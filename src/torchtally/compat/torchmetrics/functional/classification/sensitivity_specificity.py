"""`torchmetrics.functional.classification.sensitivity_specificity`: Sensitivity at a fixed specificity (see `_curves`)."""

from torchtally.compat.torchmetrics.functional.classification._curves import (
    _convert_fpr_to_specificity,  # noqa: F401  (TorchMetrics has it here; its tests import it)
    binary_sensitivity_at_specificity,
    multiclass_sensitivity_at_specificity,
    multilabel_sensitivity_at_specificity,
    sensitivity_at_specificity,
)

__all__ = [
    "binary_sensitivity_at_specificity",
    "multiclass_sensitivity_at_specificity",
    "multilabel_sensitivity_at_specificity",
    "sensitivity_at_specificity",
]
