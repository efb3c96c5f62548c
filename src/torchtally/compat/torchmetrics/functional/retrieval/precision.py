"""`torchmetrics.functional.retrieval.precision` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.retrieval._functions import retrieval_precision

__all__ = ["retrieval_precision"]
