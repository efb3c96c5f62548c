"""`torchmetrics.functional.classification.stat_scores`: Stat scores (tp, fp, tn, fn, support) (see `_confmat`)."""

from torchtally.compat.torchmetrics.functional.classification._confmat import (
    _refine_preds_oh,  # noqa: F401  (TorchMetrics has it here; its tests import it)
    binary_stat_scores,
    multiclass_stat_scores,
    multilabel_stat_scores,
    stat_scores,
)

__all__ = [
    "binary_stat_scores",
    "multiclass_stat_scores",
    "multilabel_stat_scores",
    "stat_scores",
]
