"""`torchmetrics.functional.regression.cosine_similarity` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.regression._functions import (
    cosine_similarity,
)

__all__ = ["cosine_similarity"]
