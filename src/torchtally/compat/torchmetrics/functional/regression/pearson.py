"""`torchmetrics.functional.regression.pearson` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.regression._functions import (
    pearson_corrcoef,
)

__all__ = ["pearson_corrcoef"]
