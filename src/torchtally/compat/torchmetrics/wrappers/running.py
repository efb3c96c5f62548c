"""`torchmetrics.wrappers.running`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.wrappers import (
    Running,
)

__all__ = ["Running"]
