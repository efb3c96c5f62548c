"""Streaming quantiles and histograms of a value, with an error bound."""

from torchtally.metrics.histogram._quantile import QuantileMetric

__all__ = ["QuantileMetric"]
