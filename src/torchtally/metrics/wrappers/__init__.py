"""Wrappers around metrics: bootstrap confidence intervals (vectorized over replicas)."""

from torchtally.metrics.wrappers._bootstrap import BootStrapper

__all__ = ["BootStrapper"]
