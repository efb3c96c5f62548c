"""`Broadcast`: one observer that hands every event to many (the learner's observers)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import final

from torchtally._records import MetricRecord, Observer, Progress, RunInfo, adapt_observer

__all__ = ["Broadcast"]


@final
class Broadcast(Observer):
    """Forward each event to every observer, in order.

    An observer that does not subclass `Observer` may define only the methods it has a use
    for: it is adapted once, when given (`adapt_observer`). A system monitor can be given the
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

    __slots__ = ("_observers", "_targets")

    def __init__(self, observers: Sequence[Observer | object]) -> None:
        self._observers: tuple[Observer | object, ...] = ()
        self._targets: tuple[Observer, ...] = ()
        for observer in observers:
            self.add(observer)

    @property
    def observers(self) -> tuple[Observer | object, ...]:
        """The observers, as given."""
        return self._observers

    def add(self, observer: Observer | object) -> Observer:
        """Forward future events to `observer` too (after the others).

        Args:
            observer: An `Observer`, or an object with some of its event methods.

        Returns:
            The `Observer` the events are sent to (`observer` itself, or its adapter).

        Raises:
            TypeError: `observer` is no `Observer` and has none of the event methods.
        """
        target = adapt_observer(observer, "observers")
        self._observers = (*self._observers, observer)
        self._targets = (*self._targets, target)
        return target

    def bind_stop(self, request_stop: Callable[[], None]) -> bool:
        """Offer `request_stop` to every observer.

        Returns:
            Whether any observer kept it.
        """
        kept = False
        for target in self._targets:
            kept = target.bind_stop(request_stop) or kept
        return kept

    def on_run_start(self, info: RunInfo) -> None:
        """Forward `on_run_start`."""
        for target in self._targets:
            target.on_run_start(info)

    def on_progress(self, progress: Progress) -> None:
        """Forward `on_progress`."""
        for target in self._targets:
            target.on_progress(progress)

    def on_records(self, records: list[MetricRecord]) -> None:
        """Forward `on_records` (each observer gets its own copy of the list)."""
        for target in self._targets:
            target.on_records(list(records))

    def on_epoch_end(self, split: str, epoch: int) -> None:
        """Forward `on_epoch_end`."""
        for target in self._targets:
            target.on_epoch_end(split, epoch)

    def on_run_end(self, stopped_early: bool) -> None:
        """Forward `on_run_end`."""
        for target in self._targets:
            target.on_run_end(stopped_early)
