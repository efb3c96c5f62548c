"""`torchmetrics.functional.clustering.rand_score` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.clustering._functions import (
    rand_score,
)

__all__ = ["rand_score"]
