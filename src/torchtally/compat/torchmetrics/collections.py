"""`torchmetrics.collections`: TorchMetrics' module path of `MetricCollection`."""

from torchtally.compat.torchmetrics.collection import MetricCollection

__all__ = ["MetricCollection"]
