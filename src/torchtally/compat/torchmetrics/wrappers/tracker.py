"""`torchmetrics.wrappers.tracker`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.wrappers import (
    MetricTracker,
)

__all__ = ["MetricTracker"]
