"""`torchmetrics.functional.retrieval.precision_recall_curve` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.retrieval._functions import (
    retrieval_precision_recall_curve,
)

__all__ = ["retrieval_precision_recall_curve"]
