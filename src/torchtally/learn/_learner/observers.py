"""`Broadcast`: one observer that hands every event to many (the learner's observers)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import final

from torchtally._records import MetricRecord, Observer, Progress, RunInfo

__all__ = ["Broadcast"]

_METHODS = ("on_run_start", "on_progress", "on_records", "on_epoch_end", "on_run_end")


@final
class Broadcast:
    """Forward each event to every observer, in order.

    An observer may leave out methods it has no use for. A system monitor can be given the
    broadcast as its one observer, so its samples reach every observer of the learner.

    Args:
        observers: The observers.

    Example:
        >>> from torchtally.learn import FileLogger, SummaryTable
        >>> both = Broadcast([FileLogger("runs/a"), SummaryTable()])
        >>> both.on_run_start(RunInfo(("train",), 1, {"train": ("loss",)}))
        >>> both.on_records([MetricRecord("train", 1, 1, "loss", 0.5, 0.0)])
        >>> both.on_epoch_end("train", 1)
        >>> len(both.observers)
        2
    """

    def __init__(self, observers: Sequence[Observer]) -> None:
        for observer in observers:
            if not any(callable(getattr(observer, m, None)) for m in _METHODS):
                raise TypeError(
                    "Argument `observers` must hold observers (objects with on_run_start, "
                    "on_progress, on_records, on_epoch_end, on_run_end methods). "
                    f"Received: {observer!r}"
                )
        self.observers = tuple(observers)

    def on_run_start(self, info: RunInfo) -> None:
        """Forward `on_run_start`."""
        for observer in self.observers:
            method = getattr(observer, "on_run_start", None)
            if method is not None:
                method(info)

    def on_progress(self, progress: Progress) -> None:
        """Forward `on_progress`."""
        for observer in self.observers:
            method = getattr(observer, "on_progress", None)
            if method is not None:
                method(progress)

    def on_records(self, records: list[MetricRecord]) -> None:
        """Forward `on_records` (each observer gets its own copy of the list)."""
        for observer in self.observers:
            method = getattr(observer, "on_records", None)
            if method is not None:
                method(list(records))

    def on_epoch_end(self, split: str, epoch: int) -> None:
        """Forward `on_epoch_end`."""
        for observer in self.observers:
            method = getattr(observer, "on_epoch_end", None)
            if method is not None:
                method(split, epoch)

    def on_run_end(self, stopped_early: bool) -> None:
        """Forward `on_run_end`."""
        for observer in self.observers:
            method = getattr(observer, "on_run_end", None)
            if method is not None:
                method(stopped_early)
