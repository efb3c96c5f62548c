"""Learner, dashboard, loggers and plots (the Burn-style training loop around the metrics)."""

from torchtally.learn._events import (
    SYSTEM_SPLIT,
    CurveData,
    MetricRecord,
    Observer,
    Progress,
    RunInfo,
)

__all__ = ["SYSTEM_SPLIT", "CurveData", "MetricRecord", "Observer", "Progress", "RunInfo"]
