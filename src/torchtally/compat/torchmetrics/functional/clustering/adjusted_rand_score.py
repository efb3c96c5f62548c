"""`torchmetrics.functional.clustering.adjusted_rand_score` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.clustering._functions import (
    adjusted_rand_score,
)

__all__ = ["adjusted_rand_score"]
