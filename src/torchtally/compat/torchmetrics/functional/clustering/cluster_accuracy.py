"""`torchmetrics.functional.clustering.cluster_accuracy` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.clustering._functions import (
    cluster_accuracy,
)

__all__ = ["cluster_accuracy"]
