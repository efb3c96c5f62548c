"""`torchmetrics.text.cer`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.text import (
    CharErrorRate,
)

__all__ = ["CharErrorRate"]
