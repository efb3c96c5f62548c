"""`torchmetrics.functional.retrieval.auroc` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.retrieval._functions import retrieval_auroc

__all__ = ["retrieval_auroc"]
