"""`RunScope`: the life of one run, from `on_run_start` to `on_run_end`, whatever happens.

A run (a `fit`, a `validate`, a `test`) clears the stop flag, starts the system monitor if it
is not running, tells the observers it starts, and runs its body with Ctrl-C turned into a
stop request. A `KeyboardInterrupt` ends it like a stop (after the interrupt handler, which
checkpoints); any other error still tells the observers the run ended (a dashboard restores
the terminal then) before it propagates.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, final

from torchtally._records import RunInfo
from torchtally.learn._learner.observers import Broadcast
from torchtally.learn._learner.signals import stop_on_sigint

__all__ = ["RunScope"]


@final
class RunScope:
    """Runs bodies between run start and run end.

    Args:
        broadcast: The observers.
        stop: The stop flag (cleared at each run's start).
        monitor: A system monitor (start, stop, running), or None.
        handle_sigint: Turn the first Ctrl-C into a stop request.

    Example:
        >>> from torchtally.learn import SummaryTable
        >>> scope = RunScope(Broadcast([SummaryTable()]), threading.Event(), None, True)
        >>> info = RunInfo(("train",), num_epochs=1, metric_names={"train": ("loss",)})
        >>> scope.run(info, lambda: False)  # the body returns whether it stopped early
        False
    """

    def __init__(
        self, broadcast: Broadcast, stop: threading.Event, monitor: Any, handle_sigint: bool
    ) -> None:
        self.broadcast = broadcast
        self.stop = stop
        self.monitor = monitor
        self.handle_sigint = handle_sigint

    def run(
        self,
        info: RunInfo,
        body: Callable[[], bool],
        on_interrupt: Callable[[], None] | None = None,
    ) -> bool:
        """Run `body` as one run.

        Args:
            info: What the observers are told at the start.
            body: The run's work; returns whether it stopped early.
            on_interrupt: Called after a `KeyboardInterrupt` (to checkpoint), or None.

        Returns:
            Whether the run stopped early (a stop request or an interrupt).
        """
        self.stop.clear()
        started = self._start_monitor()
        self.broadcast.on_run_start(info)
        stopped = True
        try:
            with stop_on_sigint(self.stop.set, self.stop.is_set, self.handle_sigint):
                try:
                    stopped = body()
                except KeyboardInterrupt:
                    self.stop.set()
                    if on_interrupt is not None:
                        on_interrupt()
        finally:
            self.broadcast.on_run_end(stopped)
            if started:
                self.monitor.stop()
        return stopped

    def _start_monitor(self) -> bool:
        if self.monitor is None or getattr(self.monitor, "running", False):
            return False
        self.monitor.start()
        return True
