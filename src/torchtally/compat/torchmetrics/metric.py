"""`torchmetrics.metric`: TorchMetrics' module path of `Metric` and `CompositionalMetric`."""

from torchtally.compat.torchmetrics._base import CompositionalMetric, Metric

__all__ = ["CompositionalMetric", "Metric"]
