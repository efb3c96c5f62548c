"""Ranking functionals: exact and binned AUROC, thresholded AUC (cstorch/TF), precision@k and
recall@k."""

from torchtally.functional.ranking._auc import auc, auc_compute, auc_thresholds, auc_update
from torchtally.functional.ranking._auroc import auroc, exact_auroc_compute, exact_auroc_update
from torchtally.functional.ranking._binned_auroc import (
    binned_auroc,
    binned_auroc_compute,
    binned_auroc_error_bound,
    binned_auroc_update,
)
from torchtally.functional.ranking._keys import bits_to_keys_, score_bits, score_keys
from torchtally.functional.ranking._top_k import (
    at_k_update,
    precision_at_k,
    precision_at_k_compute,
    recall_at_k,
    recall_at_k_compute,
)

__all__ = [
    "at_k_update",
    "auc",
    "auc_compute",
    "auc_thresholds",
    "auc_update",
    "auroc",
    "binned_auroc",
    "binned_auroc_compute",
    "binned_auroc_error_bound",
    "binned_auroc_update",
    "bits_to_keys_",
    "exact_auroc_compute",
    "exact_auroc_update",
    "precision_at_k",
    "precision_at_k_compute",
    "recall_at_k",
    "recall_at_k_compute",
    "score_bits",
    "score_keys",
]
