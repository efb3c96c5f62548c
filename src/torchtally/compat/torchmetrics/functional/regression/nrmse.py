"""`torchmetrics.functional.regression.nrmse` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.regression._functions import (
    normalized_root_mean_squared_error,
)

__all__ = ["normalized_root_mean_squared_error"]
