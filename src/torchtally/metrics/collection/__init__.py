"""Collections of metrics that share statistics and sync together."""

from torchtally.metrics.collection._collection import MetricCollection

__all__ = ["MetricCollection"]
