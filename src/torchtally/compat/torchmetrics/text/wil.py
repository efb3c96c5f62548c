"""`torchmetrics.text.wil`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.text import (
    WordInfoLost,
)

__all__ = ["WordInfoLost"]
