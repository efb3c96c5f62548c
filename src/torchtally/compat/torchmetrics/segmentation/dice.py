"""`torchmetrics.segmentation.dice`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.segmentation import (
    DiceScore,
)

__all__ = ["DiceScore"]
