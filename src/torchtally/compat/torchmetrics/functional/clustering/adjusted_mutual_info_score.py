"""`torchmetrics.functional.clustering.adjusted_mutual_info_score` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.clustering._functions import (
    adjusted_mutual_info_score,
)

__all__ = ["adjusted_mutual_info_score"]
