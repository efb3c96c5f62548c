"""The executor's profiler: throughput in samples per second.

Two activities, as in cstorch: `rate` is smoothed (an exponential moving average of the rate
over each interval between queries) and `global_rate` is not (all samples since the run
started, over all the time since). The clock is injectable so that both can be tested exactly.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import final

from torchtally._errors import check_choice

__all__ = ["ACTIVITIES", "Profiler", "RateTracker"]

ACTIVITIES = ("rate", "global_rate")


@final
class RateTracker:
    """One measurement of a run's throughput, with cstorch's `RateTrackerActivity` fields.

    Attributes:
        total_samples: Samples processed since the run started.
        total_time: Seconds since the run started.
        rate: Smoothed samples per second (None when the profiler does not track "rate").
        global_rate: Samples per second since the start (None when not tracked).
        samples_per_sec: The same as `global_rate`.
        flops_utilization: Always None: only a Cerebras system reports it.
    """

    def __init__(
        self, total_samples: int, total_time: float, rate: float | None, global_rate: float | None
    ) -> None:
        self.total_samples = total_samples
        self.total_time = total_time
        self.rate = rate
        self.global_rate = global_rate
        self.samples_per_sec = global_rate
        self.flops_utilization = None

    def __call__(self) -> dict[str, float | int | None]:
        """The measurement as a dict, as calling a cstorch activity returns it."""
        return {
            "total_samples": self.total_samples,
            "total_time": self.total_time,
            "rate": self.rate,
            "global_rate": self.global_rate,
            "samples_per_sec": self.samples_per_sec,
            "flops_utilization": self.flops_utilization,
        }

    def __repr__(self) -> str:
        return f"RateTracker({self()})"


@final
class Profiler:
    """Counts samples and reports `rate()` and `global_rate()`.

    Args:
        activities: Which of "rate", "global_rate" to track. Default: both.
        clock: Returns the time in seconds. Default: `time.perf_counter`.
        smoothing: Weight of the previous value in the moving average of `rate` (0: none).

    Example:
        >>> now = [0.0]
        >>> profiler = Profiler(clock=lambda: now[0], smoothing=0.5)
        >>> profiler.start()
        >>> profiler.add_samples(10); now[0] = 1.0
        >>> profiler.rate(), profiler.global_rate()
        (10.0, 10.0)
        >>> profiler.add_samples(30); now[0] = 2.0
        >>> profiler.rate(), profiler.global_rate()
        (20.0, 20.0)
    """

    def __init__(
        self,
        activities: Sequence[str] | None = None,
        clock: Callable[[], float] | None = None,
        smoothing: float = 0.4,
    ) -> None:
        chosen = list(ACTIVITIES) if activities is None else list(activities)
        for activity in chosen:
            check_choice("profiler_activities", activity, ACTIVITIES)
        if not 0.0 <= smoothing < 1.0:
            raise ValueError(
                f"Argument `smoothing` must be in [0, 1). Received: smoothing={smoothing!r}"
            )
        self.activities = tuple(chosen)
        self.smoothing = smoothing
        self._clock = clock or time.perf_counter
        self._start: float | None = None
        self._last = 0.0
        self._total = 0
        self._since_last = 0
        self._rate: float | None = None

    @property
    def total_samples(self) -> int:
        """Samples counted since `start`."""
        return self._total

    def start(self) -> None:
        """Start timing (the executor calls this when its loop begins)."""
        self._start = self._last = self._clock()
        self._total = self._since_last = 0
        self._rate = None

    def add_samples(self, count: int) -> None:
        """Count `count` more samples as processed."""
        self._total += count
        self._since_last += count

    def rate(self) -> float:
        """Smoothed samples per second of the samples added since the last query.

        Returns:
            The moving average of the per-interval rates (0.0 before anything was timed).
        """
        self._require("rate")
        if self._start is None:
            return 0.0
        now = self._clock()
        elapsed = now - self._last
        if elapsed <= 0:
            return self._rate or 0.0
        current = self._since_last / elapsed
        previous = self._rate
        self._rate = (
            current
            if previous is None
            else (self.smoothing * previous + (1.0 - self.smoothing) * current)
        )
        self._since_last, self._last = 0, now
        return self._rate

    def global_rate(self) -> float:
        """Samples per second since the run started, not smoothed.

        Returns:
            Total samples over total elapsed time (0.0 before any time has elapsed).
        """
        self._require("global_rate")
        if self._start is None:
            return 0.0
        elapsed = self._clock() - self._start
        return self._total / elapsed if elapsed > 0 else 0.0

    def total_time(self) -> float:
        """Seconds since the run started (0.0 before it started)."""
        return 0.0 if self._start is None else self._clock() - self._start

    @property
    def rate_tracker(self) -> RateTracker:
        """A snapshot of the profile, as cstorch's `executor.profiler.rate_tracker` activity.

        Each access measures anew (and, like cstorch's, advances the smoothed `rate`).

        Example:
            >>> from torchtally.utils.data import DataExecutor, DataLoader
            >>> def input_fn(batch_size):
            ...     data = torch.utils.data.TensorDataset(torch.arange(8.0))
            ...     return torch.utils.data.DataLoader(data, batch_size=batch_size)
            >>> executor = DataExecutor(DataLoader(input_fn, batch_size=4), num_steps=2)
            >>> for batch in executor:
            ...     pass
            >>> tracker = executor.profiler.rate_tracker
            >>> tracker.total_samples, tracker.global_rate > 0
            (8, True)
        """
        return RateTracker(
            total_samples=self._total,
            total_time=self.total_time(),
            rate=self.rate() if "rate" in self.activities else None,
            global_rate=self.global_rate() if "global_rate" in self.activities else None,
        )

    def _require(self, activity: str) -> None:
        if activity not in self.activities:
            raise RuntimeError(
                f"The profiler does not track {activity!r}: pass "
                f"profiler_activities=[..., {activity!r}] to the DataExecutor. "
                f"Received: profiler_activities={list(self.activities)!r}"
            )
