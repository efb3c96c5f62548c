"""`torchmetrics.functional.retrieval.average_precision` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.retrieval._functions import (
    retrieval_average_precision,
)

__all__ = ["retrieval_average_precision"]
