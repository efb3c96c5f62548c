"""`torchmetrics.functional.retrieval.hit_rate` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.retrieval._functions import retrieval_hit_rate

__all__ = ["retrieval_hit_rate"]
