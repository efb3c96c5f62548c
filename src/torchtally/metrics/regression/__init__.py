"""Regression metrics."""

from torchtally.metrics.regression._errors import MAEMetric, MSEMetric, SMAPEMetric
from torchtally.metrics.regression._r2 import R2ScoreMetric

__all__ = ["MAEMetric", "MSEMetric", "R2ScoreMetric", "SMAPEMetric"]
