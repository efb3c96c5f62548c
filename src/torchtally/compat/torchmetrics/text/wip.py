"""`torchmetrics.text.wip`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.text import (
    WordInfoPreserved,
)

__all__ = ["WordInfoPreserved"]
