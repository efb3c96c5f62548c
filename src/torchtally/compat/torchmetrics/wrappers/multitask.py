"""`torchmetrics.wrappers.multitask`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.wrappers import (
    MultitaskWrapper,
)

__all__ = ["MultitaskWrapper"]
