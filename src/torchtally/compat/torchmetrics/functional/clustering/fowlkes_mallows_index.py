"""`torchmetrics.functional.clustering.fowlkes_mallows_index` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.clustering._functions import (
    fowlkes_mallows_index,
)

__all__ = ["fowlkes_mallows_index"]
