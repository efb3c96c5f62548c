"""`torchmetrics.text.mer`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.text import (
    MatchErrorRate,
)

__all__ = ["MatchErrorRate"]
