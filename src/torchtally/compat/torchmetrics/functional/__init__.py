"""Pure functions behind the compatible classes (TorchMetrics' input conventions)."""

from torchtally.compat.torchmetrics.functional._stat_scores import (
    binary_confmat_update,
    cohen_kappa_from_confmat,
    confmat_normalize,
    exact_match_update,
    jaccard_from_confmat,
    matthews_from_confmat,
    multiclass_confmat_update,
    multilabel_confmat_update,
    reduce_stat_scores,
    safe_divide,
    sigmoid_if_logits,
    stat_scores_from_confmat,
    weighted_average,
)

__all__ = [
    "binary_confmat_update",
    "cohen_kappa_from_confmat",
    "confmat_normalize",
    "exact_match_update",
    "jaccard_from_confmat",
    "matthews_from_confmat",
    "multiclass_confmat_update",
    "multilabel_confmat_update",
    "reduce_stat_scores",
    "safe_divide",
    "sigmoid_if_logits",
    "stat_scores_from_confmat",
    "weighted_average",
]
