"""`RateTracker`: samples-per-second bookkeeping, as `cstorch.utils.tracker.RateTracker`.

`rate()` is smoothed: each query reports `(1 - s) * current + s * previous report`, where
`current` is the samples added since the last query over the time since it. `global_rate()` is
all samples over all the time since the last reset. The clock is injectable for tests.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["RateTracker"]


class RateTracker:
    """Track a sample count and report smoothed and global rates.

    Args:
        smooth_factor: Weight of the previous report in `rate()` (default 0.4, as cstorch).
        clock_ns: Returns the time in nanoseconds. Default: `time.perf_counter_ns`.

    Example:
        >>> now = [0]
        >>> tracker = RateTracker(clock_ns=lambda: now[0])
        >>> tracker.add(10); now[0] = 2_000_000_000
        >>> tracker.rate(), tracker.global_rate()
        (5.0, 5.0)
    """

    def __init__(
        self, smooth_factor: float | None = None, *, clock_ns: Callable[[], int] | None = None
    ) -> None:
        factor = 0.4 if smooth_factor is None else smooth_factor
        if not isinstance(factor, int | float) or not 0.0 <= factor <= 1.0:
            raise ValueError(
                f"Argument `smooth_factor` must be a number in [0, 1]. Received: smooth_factor={smooth_factor!r}"
            )
        self._factor = float(factor)
        self._clock = clock_ns or time.perf_counter_ns
        self.reset()

    def reset(self) -> None:
        """Forget all samples and restart the clock."""
        self.reset_time()
        self._reported = 0.0  # samples already covered by a rate() report
        self._pending = 0.0  # samples added since the last report
        self._last_rate: float | None = None

    def reset_time(self, offset: float = 0) -> None:
        """Restart the clock, as if it had started `offset` seconds ago."""
        self._start = self._clock() - offset * 1e9
        self._last = self._start

    def add(self, count: float) -> None:
        """Count `count` more samples."""
        self._pending += count

    @property
    def total_count(self) -> float:
        """Samples counted since the last reset."""
        return self._reported + self._pending

    def rate(self) -> float:
        """Smoothed samples per second of the samples added since the last query (0.0 if no time passed)."""
        now = self._clock()
        seconds = (now - self._last) / 1e9
        if seconds <= 0:
            return 0.0
        current = self._pending / seconds
        report = (
            current
            if self._last_rate is None
            else (1 - self._factor) * current + self._factor * self._last_rate
        )
        self._reported += self._pending
        self._pending = 0.0
        self._last, self._last_rate = now, report
        return report

    def global_rate(self) -> float:
        """Samples per second since the last reset, not smoothed."""
        seconds = self.elapsed_seconds()
        return self.total_count / seconds if seconds > 0 else 0.0

    def elapsed_seconds(self) -> float:
        """Seconds since the last reset."""
        return (self._clock() - self._start) / 1e9
