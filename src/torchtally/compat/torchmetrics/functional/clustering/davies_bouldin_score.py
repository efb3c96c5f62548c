"""`torchmetrics.functional.clustering.davies_bouldin_score` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.clustering._functions import (
    davies_bouldin_score,
)

__all__ = ["davies_bouldin_score"]
