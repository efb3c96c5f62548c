"""`torchmetrics.functional.classification.hamming`: Hamming distance (see `_confmat`)."""

from torchtally.compat.torchmetrics.functional.classification._confmat import (
    binary_hamming_distance,
    hamming_distance,
    multiclass_hamming_distance,
    multilabel_hamming_distance,
)

__all__ = [
    "binary_hamming_distance",
    "hamming_distance",
    "multiclass_hamming_distance",
    "multilabel_hamming_distance",
]
