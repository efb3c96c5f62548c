"""Classification metrics."""

from torchtally.metrics.classification._accuracy import AccuracyMetric

__all__ = ["AccuracyMetric"]
