"""`torchmetrics.wrappers.bootstrapping`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.wrappers import (
    BootStrapper,
)

__all__ = ["BootStrapper"]
