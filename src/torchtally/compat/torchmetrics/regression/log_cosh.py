"""`torchmetrics.regression.log_cosh`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.regression import (
    LogCoshError,
)

__all__ = ["LogCoshError"]
