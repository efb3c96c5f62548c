"""`torchmetrics.functional.clustering.mutual_info_score` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.clustering._functions import (
    mutual_info_score,
)

__all__ = ["mutual_info_score"]
