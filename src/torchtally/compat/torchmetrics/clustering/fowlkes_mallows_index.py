"""`torchmetrics.clustering.fowlkes_mallows_index`: TorchMetrics' module path for this class."""

from torchtally.compat.torchmetrics.clustering import (
    FowlkesMallowsIndex,
)

__all__ = ["FowlkesMallowsIndex"]
