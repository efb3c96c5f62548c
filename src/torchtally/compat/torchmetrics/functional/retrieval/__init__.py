"""`torchmetrics.functional.retrieval` on torchtally: one query's value per call, the native
per-query arithmetic of `torchtally.functional.retrieval` with TorchMetrics' checks."""

from torchtally.compat.torchmetrics.functional.retrieval.auroc import retrieval_auroc
from torchtally.compat.torchmetrics.functional.retrieval.average_precision import (
    retrieval_average_precision,
)
from torchtally.compat.torchmetrics.functional.retrieval.fall_out import retrieval_fall_out
from torchtally.compat.torchmetrics.functional.retrieval.hit_rate import retrieval_hit_rate
from torchtally.compat.torchmetrics.functional.retrieval.ndcg import retrieval_normalized_dcg
from torchtally.compat.torchmetrics.functional.retrieval.precision import retrieval_precision
from torchtally.compat.torchmetrics.functional.retrieval.precision_recall_curve import (
    retrieval_precision_recall_curve,
)
from torchtally.compat.torchmetrics.functional.retrieval.r_precision import retrieval_r_precision
from torchtally.compat.torchmetrics.functional.retrieval.recall import retrieval_recall
from torchtally.compat.torchmetrics.functional.retrieval.reciprocal_rank import (
    retrieval_reciprocal_rank,
)

__all__ = [
    "retrieval_auroc",
    "retrieval_average_precision",
    "retrieval_fall_out",
    "retrieval_hit_rate",
    "retrieval_normalized_dcg",
    "retrieval_precision",
    "retrieval_precision_recall_curve",
    "retrieval_r_precision",
    "retrieval_recall",
    "retrieval_reciprocal_rank",
]
