"""`torchmetrics.functional.clustering.calinski_harabasz_score` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.clustering._functions import (
    calinski_harabasz_score,
)

__all__ = ["calinski_harabasz_score"]
