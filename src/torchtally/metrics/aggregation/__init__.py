"""Aggregations: means, perplexity, learning rate."""

from torchtally.metrics.aggregation._learning_rate import LearningRateMetric
from torchtally.metrics.aggregation._mean import MeanMetric, PerplexityMetric

__all__ = ["LearningRateMetric", "MeanMetric", "PerplexityMetric"]
