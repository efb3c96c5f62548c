"""Wrappers around metrics: bootstrap confidence intervals (vectorized over replicas),
per-class dicts for logging, multi-task groups, a fixed-window running metric, and a tracker
of values (and the best one) over steps."""

from torchtally.metrics.wrappers._bootstrap import BootStrapper
from torchtally.metrics.wrappers._classwise import ClasswiseWrapper
from torchtally.metrics.wrappers._multitask import MultitaskWrapper
from torchtally.metrics.wrappers._running import Running
from torchtally.metrics.wrappers._tracker import MetricTracker

__all__ = ["BootStrapper", "ClasswiseWrapper", "MetricTracker", "MultitaskWrapper", "Running"]
