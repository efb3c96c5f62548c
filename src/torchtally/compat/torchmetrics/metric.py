"""`torchmetrics.metric`: TorchMetrics' module path of `Metric` (and `CompositionalMetric`)."""

from torchtally.compat.torchmetrics._base import Metric

__all__ = ["Metric"]
