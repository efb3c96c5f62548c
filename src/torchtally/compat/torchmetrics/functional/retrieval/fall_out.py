"""`torchmetrics.functional.retrieval.fall_out` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.retrieval._functions import retrieval_fall_out

__all__ = ["retrieval_fall_out"]
