"""`torchmetrics.functional.regression.log_cosh` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.regression._functions import (
    log_cosh_error,
)

__all__ = ["log_cosh_error"]
