"""`torchmetrics.functional.retrieval.reciprocal_rank` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.retrieval._functions import retrieval_reciprocal_rank

__all__ = ["retrieval_reciprocal_rank"]
