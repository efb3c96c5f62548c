"""`CPUUsage`: system-wide CPU utilisation since the previous read, from psutil."""

from __future__ import annotations

import threading
import time
from typing import final

from torchtally.metrics.system._psutil import load_psutil
from torchtally.metrics.system._sensor import Reading, Sensor

__all__ = ["MIN_WINDOW_S", "CPUUsage"]

#: Shortest window measured: the kernel's CPU time counters tick every 10 ms, so a shorter
#: window is noise (psutil even answers 0.0 for an empty one).
MIN_WINDOW_S = 0.02


@final
class CPUUsage(Sensor):
    """System-wide CPU utilisation as a fraction in [0, 1] (all cores together), averaged over
    the time since this thread's previous read (`psutil.cpu_percent(interval=None)` / 100).
    Emits "cpu_usage" (unit "%").

    psutil measures from a thread's previous call, so the first read on a thread only starts the
    window and records nothing, and so does a read less than `MIN_WINDOW_S` after the window
    started (the window keeps growing). `SystemMonitor` starts the window on its own thread
    before its first sample.

    Example:
        >>> sensor = CPUUsage()
        >>> sensor.read()  # starts the window on this thread
        []
        >>> time.sleep(0.1)
        >>> [r.name for r in sensor.read()]
        ['cpu_usage']
    """

    def __init__(self) -> None:
        super().__init__("cpu_usage")
        self._window_start: dict[int, float] = {}

    def _probe(self) -> None:
        self._start_window()

    def _read(self) -> list[Reading]:
        start = self._window_start.get(threading.get_ident())
        if start is None:
            self._start_window()
            return []
        if time.monotonic() - start < MIN_WINDOW_S:
            return []
        percent = load_psutil().cpu_percent(interval=None)
        self._window_start[threading.get_ident()] = time.monotonic()
        return [Reading(self.name, float(percent) / 100.0, "%")]

    def _start_window(self) -> None:
        load_psutil().cpu_percent(interval=None)
        self._window_start[threading.get_ident()] = time.monotonic()

    def _release(self) -> None:
        self._window_start.clear()
