"""`torchmetrics.functional.regression.symmetric_mape` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.regression._functions import (
    symmetric_mean_absolute_percentage_error,
)

__all__ = ["symmetric_mean_absolute_percentage_error"]
