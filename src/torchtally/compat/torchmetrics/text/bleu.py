"""`torchmetrics.text.bleu`: TorchMetrics' module path for this class."""

from torchtally.compat.torchmetrics.text import (
    BLEUScore,
)

__all__ = ["BLEUScore"]
