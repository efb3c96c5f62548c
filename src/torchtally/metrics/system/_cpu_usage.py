"""`CPUUsage`: system-wide CPU utilisation since the previous read, from psutil."""

from __future__ import annotations

import threading
from typing import final

from torchtally.metrics.system._psutil import load_psutil
from torchtally.metrics.system._sensor import Reading, Sensor

__all__ = ["CPUUsage"]


@final
class CPUUsage(Sensor):
    """System-wide CPU utilisation as a fraction in [0, 1] (all cores together), averaged over
    the time since this thread's previous read (`psutil.cpu_percent(interval=None)` / 100).
    Emits "cpu_usage" (unit "%").

    psutil measures from a thread's previous call, so the first read on a thread only starts the
    window and records nothing rather than a meaningless 0. `SystemMonitor` probes on its own
    thread, so its first sample already has a value.

    Example:
        >>> sensor = CPUUsage()
        >>> sensor.read()  # starts the window on this thread
        []
        >>> [r.name for r in sensor.read()]
        ['cpu_usage']
    """

    def __init__(self) -> None:
        super().__init__("cpu_usage")
        self._started: set[int | None] = set()

    def _probe(self) -> None:
        self._start_window()

    def _read(self) -> list[Reading]:
        if threading.get_ident() not in self._started:
            self._start_window()
            return []
        percent = load_psutil().cpu_percent(interval=None)
        return [Reading(self.name, float(percent) / 100.0, "%")]

    def _start_window(self) -> None:
        load_psutil().cpu_percent(interval=None)
        self._started.add(threading.get_ident())

    def _release(self) -> None:
        self._started.clear()
