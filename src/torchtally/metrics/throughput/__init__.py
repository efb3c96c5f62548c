"""Throughput metrics: iteration speed."""

from torchtally.metrics.throughput._speed import IterationSpeedMetric

__all__ = ["IterationSpeedMetric"]
