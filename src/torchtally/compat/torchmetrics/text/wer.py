"""`torchmetrics.text.wer`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.text import (
    WordErrorRate,
)

__all__ = ["WordErrorRate"]
