"""`torchmetrics.functional.regression.log_mse` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.regression._functions import (
    mean_squared_log_error,
)

__all__ = ["mean_squared_log_error"]
