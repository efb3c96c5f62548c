"""The error a benchmark raises when one of its metrics fails.

NeuroBench catches any exception inside a metric and reports 0.0 or None in its place, so a
broken metric looks like a measurement. Here the failure propagates, named.
"""

from __future__ import annotations

from typing import final

__all__ = ["MetricFailedError"]


@final
class MetricFailedError(RuntimeError):
    """A metric raised while the benchmark built or ran it.

    Args:
        metric: The metric's name (its class name, the key it would have in the results).
        stage: Where it failed, e.g. ``"construction"``, ``"batch 3"`` or ``"compute"``.
        cause: The exception the metric raised.

    Example:
        >>> err = MetricFailedError("MSE", "batch 0", ValueError("bad shapes"))
        >>> print(err)
        Metric `MSE` failed at batch 0: ValueError: bad shapes
    """

    def __init__(self, metric: str, stage: str, cause: BaseException) -> None:
        super().__init__(f"Metric `{metric}` failed at {stage}: {type(cause).__name__}: {cause}")
        self.metric = metric
        self.stage = stage
        self.cause = cause
