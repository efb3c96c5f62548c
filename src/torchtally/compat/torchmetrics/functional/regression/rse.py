"""`torchmetrics.functional.regression.rse` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.regression._functions import (
    relative_squared_error,
)

__all__ = ["relative_squared_error"]
