"""`torchmetrics.functional.classification.ranking`: Multilabel ranking metrics (see `_scores`)."""

from torchtally.compat.torchmetrics.functional.classification._scores import (
    multilabel_coverage_error,
    multilabel_ranking_average_precision,
    multilabel_ranking_loss,
)

__all__ = [
    "multilabel_coverage_error",
    "multilabel_ranking_average_precision",
    "multilabel_ranking_loss",
]
