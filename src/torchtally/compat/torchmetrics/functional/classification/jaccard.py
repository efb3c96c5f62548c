"""`torchmetrics.functional.classification.jaccard`: Jaccard index (see `_confmat`)."""

from torchtally.compat.torchmetrics.functional.classification._confmat import (
    _jaccard_index_reduce,  # noqa: F401  (TorchMetrics has it here; its tests import it)
    binary_jaccard_index,
    jaccard_index,
    multiclass_jaccard_index,
    multilabel_jaccard_index,
)

__all__ = [
    "binary_jaccard_index",
    "jaccard_index",
    "multiclass_jaccard_index",
    "multilabel_jaccard_index",
]
