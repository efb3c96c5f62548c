"""`IterationSpeedMetric`: items (or iterations) per second since the start (Burn's
`IterationSpeedMetric`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import final

import torch
from torch import Tensor

from torchtally.metrics._base import Metric

__all__ = ["IterationSpeedMetric"]


@final
class IterationSpeedMetric(Metric):
    """Items per second since construction or the last `reset`.

    `update` only adds the batch's item count to a tensor (traceable, no clock read); the
    clock is read by `compute`, on the host. Under torch.distributed the items are summed over
    ranks and divided by this rank's elapsed time: the global throughput.

    Args:
        name: Metric name; defaults to "iteration_speed_metric".
        clock: Seconds as a float (default `time.perf_counter`); injectable for tests.

    Example:
        >>> ticks = iter([0.0, 2.0])
        >>> speed = IterationSpeedMetric(clock=lambda: next(ticks))
        >>> speed.update(64)
        >>> speed.update(64)
        >>> speed.compute()  # 128 items in 2 s
        tensor(64., dtype=torch.float64)
    """

    unit = ""
    higher_is_better = True
    input_kind = "count"
    items: Tensor

    def __init__(
        self, name: str | None = None, *, clock: Callable[[], float] | None = None
    ) -> None:
        self._clock = time.perf_counter if clock is None else clock
        self._start = 0.0
        super().__init__(name)  # runs `reset`, which starts the clock
        self.register_state("items", torch.zeros((), dtype=torch.float64))

    def reset(self) -> None:
        super().reset()
        self._start = self._clock()

    def update(self, items: int | Tensor = 1) -> None:
        """Count `items` processed (e.g. the batch size; default one iteration)."""
        if isinstance(items, bool) or not isinstance(items, (int, Tensor)):
            raise TypeError(
                f"Argument `items` must be an int or a tensor. Received: items={items!r}"
            )
        self.items.add_(items)

    def compute(self) -> Tensor:
        elapsed = self._clock() - self._start
        return self.items / max(elapsed, 1e-12)
