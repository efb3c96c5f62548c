"""Multilabel metrics: Hamming score."""

from torchtally.metrics.multilabel._hamming import HammingScoreMetric

__all__ = ["HammingScoreMetric"]
