"""`torchmetrics.functional.retrieval.r_precision` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.retrieval._functions import retrieval_r_precision

__all__ = ["retrieval_r_precision"]
