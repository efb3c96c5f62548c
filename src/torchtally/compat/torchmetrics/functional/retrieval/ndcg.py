"""`torchmetrics.functional.retrieval.ndcg` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.retrieval._functions import retrieval_normalized_dcg

__all__ = ["retrieval_normalized_dcg"]
