"""`torchmetrics.functional.clustering.dunn_index` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.clustering._functions import (
    dunn_index,
)

__all__ = ["dunn_index"]
