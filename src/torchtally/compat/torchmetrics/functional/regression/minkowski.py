"""`torchmetrics.functional.regression.minkowski` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.regression._functions import (
    minkowski_distance,
)

__all__ = ["minkowski_distance"]
