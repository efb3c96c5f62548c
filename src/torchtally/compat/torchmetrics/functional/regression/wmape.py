"""`torchmetrics.functional.regression.wmape` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.regression._functions import (
    weighted_mean_absolute_percentage_error,
)

__all__ = ["weighted_mean_absolute_percentage_error"]
