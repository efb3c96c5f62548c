"""Text metrics: word and character error rates (host work on strings)."""

from torchtally.metrics.text._error_rate import CharErrorRateMetric, WordErrorRateMetric

__all__ = ["CharErrorRateMetric", "WordErrorRateMetric"]
