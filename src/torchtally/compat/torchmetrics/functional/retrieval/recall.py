"""`torchmetrics.functional.retrieval.recall` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.retrieval._functions import retrieval_recall

__all__ = ["retrieval_recall"]
