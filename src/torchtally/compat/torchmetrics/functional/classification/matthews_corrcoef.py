"""`torchmetrics.functional.classification.matthews_corrcoef`: Matthews correlation coefficient (see `_confmat`)."""

from torchtally.compat.torchmetrics.functional.classification._confmat import (
    _matthews_corrcoef_reduce,  # noqa: F401  (TorchMetrics has it here; its tests import it)
    binary_matthews_corrcoef,
    matthews_corrcoef,
    multiclass_matthews_corrcoef,
    multilabel_matthews_corrcoef,
)

__all__ = [
    "binary_matthews_corrcoef",
    "matthews_corrcoef",
    "multiclass_matthews_corrcoef",
    "multilabel_matthews_corrcoef",
]
