"""`torchmetrics.functional.regression.mape` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.regression._functions import (
    mean_absolute_percentage_error,
)

__all__ = ["mean_absolute_percentage_error"]
