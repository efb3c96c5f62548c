"""`torchmetrics.functional.clustering.normalized_mutual_info_score` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.clustering._functions import (
    normalized_mutual_info_score,
)

__all__ = ["normalized_mutual_info_score"]
