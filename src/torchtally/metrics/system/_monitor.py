"""`SystemMonitor`: samples system sensors on a background thread and hands the values to the
learner's observers as `MetricRecord`s of the "system" split."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence
from types import TracebackType
from typing import final

from torchtally._errors import check_int
from torchtally._records import SYSTEM_SPLIT, MetricRecord, Observer, adapt_observer
from torchtally.metrics.system._defaults import default_sensors
from torchtally.metrics.system._sensor import Sensor, announce_unavailable, logger

__all__ = ["SystemMonitor"]


@final
class SystemMonitor:
    """Samples sensors every `interval_s` seconds on a daemon thread, off the training path.

    Each sample becomes `MetricRecord(split="system", epoch=<set_epoch value, 0 before>,
    step=<sample index, from 0>, ...)`, handed to every observer's `on_records` from the
    sampler thread. The thread first probes the sensors, announces the unavailable ones once and
    reads each once without recording (CPU usage measures from a thread's previous read); the
    first sample follows one interval later. A sensor that raises is disabled with one message;
    an observer that raises is reported once and keeps receiving samples.

    Args:
        sensors: The sensors to sample; None for `default_sensors()` (CPU and every GPU).
        interval_s: Seconds between samples (> 0). Samples that fall behind are skipped, not
            bunched.
        observers: Receivers of the records: `Observer`s, or objects with an
            `on_records(records)` method.

    Example:
        >>> from torchtally.metrics.system import CPUMemoryUsage
        >>> class Print:
        ...     def on_records(self, records):
        ...         print([(r.name, r.step) for r in records])
        >>> monitor = SystemMonitor([CPUMemoryUsage()], interval_s=60.0, observers=[Print()])
        >>> monitor.set_epoch(1)
        >>> _ = monitor.sample()  # what the sampler thread does every interval_s
        [('cpu_memory', 0), ('cpu_memory_used', 0)]
        >>> with monitor:  # samples on a daemon thread while the block runs
        ...     monitor.running
        True
        >>> monitor.running
        False
    """

    def __init__(
        self,
        sensors: Sequence[Sensor] | None = None,
        interval_s: float = 1.0,
        observers: Sequence[Observer | object] = (),
    ) -> None:
        if (
            isinstance(interval_s, bool)
            or not isinstance(interval_s, (int, float))
            or not math.isfinite(interval_s)
            or interval_s <= 0
        ):
            raise ValueError(
                "Argument `interval_s` must be a finite number of seconds > 0. "
                f"Received: interval_s={interval_s!r}"
            )
        chosen = default_sensors() if sensors is None else list(sensors)
        for sensor in chosen:
            if not isinstance(sensor, Sensor):
                raise TypeError(
                    "Argument `sensors` must hold `Sensor` instances (e.g. CPUUsage()). "
                    f"Received an element {sensor!r} of type {type(sensor).__name__}"
                )
        self._sensors = tuple(chosen)
        self._interval_s = float(interval_s)
        self._state_lock = threading.Lock()
        self._sample_lock = threading.RLock()  # an observer may call back into the monitor
        self._observers: list[Observer] = []
        for observer in observers:
            self.add_observer(observer)
        self._epoch = 0
        self._next_step = 0
        self._failed_observers: set[int] = set()
        self._stop_event = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def sensors(self) -> tuple[Sensor, ...]:
        """The sensors sampled."""
        return self._sensors

    @property
    def interval_s(self) -> float:
        """Seconds between samples."""
        return self._interval_s

    @property
    def epoch(self) -> int:
        """The epoch stamped on the next records."""
        with self._state_lock:
            return self._epoch

    @property
    def running(self) -> bool:
        """Whether the sampler thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def add_observer(self, observer: Observer | object) -> None:
        """Send future samples to `observer` too.

        Args:
            observer: An `Observer`, or an object with an `on_records(records)` method.

        Raises:
            TypeError: `observer` is neither.
        """
        target = adapt_observer(observer, "observer", needs=("on_records",))
        with self._sample_lock:
            self._observers.append(target)

    def set_epoch(self, epoch: int) -> None:
        """Stamp subsequent samples with `epoch` (the learner calls this as epochs start).

        Args:
            epoch: The current epoch (>= 0; 0 means before training).
        """
        check_int("epoch", epoch, 0)
        with self._state_lock:
            self._epoch = epoch

    def sample(self) -> list[MetricRecord]:
        """Read every sensor now and hand the records to the observers (the sampler thread calls
        this; it is safe to call from any thread).

        Returns:
            The records of this sample ([] if no sensor could read; observers are then not
            called, but the sample index still advances).
        """
        with self._sample_lock:
            readings = []
            for sensor in self._sensors:
                try:
                    readings.extend(sensor.read())
                except Exception:  # Sensor.read catches; this guards overridden reads
                    logger.exception("torchtally system sensor %s failed", sensor.name)
            wall_time = time.time()
            with self._state_lock:
                epoch, step = self._epoch, self._next_step
                self._next_step += 1
            records = [
                MetricRecord(SYSTEM_SPLIT, epoch, step, r.name, r.value, wall_time, r.unit)
                for r in readings
            ]
            if records:
                self._emit(records)
            return records

    def start(self) -> SystemMonitor:
        """Start the sampler thread.

        Returns:
            The monitor itself.

        Raises:
            RuntimeError: It is already running.
        """
        if self.running:
            raise RuntimeError("SystemMonitor.start(): already running; call stop() first")
        self._stop_event.clear()
        self._thread = threading.Thread(
            target=self._run, name="torchtally-system-monitor", daemon=True
        )
        self._thread.start()
        return self

    def stop(self, timeout_s: float | None = None) -> None:
        """Stop sampling: wait for the thread to end (after the sample in progress, if any), then
        release the sensors. Does nothing if not running.

        Args:
            timeout_s: Most seconds to wait; None waits as long as the current sample takes.

        Raises:
            RuntimeError: The thread did not end within `timeout_s` (a sensor read blocks).
        """
        thread = self._thread
        if thread is None:
            return
        self._stop_event.set()
        if thread is threading.current_thread():  # stop() from an observer: the loop ends itself
            return
        thread.join(timeout_s)
        if thread.is_alive():
            raise RuntimeError(
                f"SystemMonitor.stop(): the sampler thread did not end within "
                f"timeout_s={timeout_s!r}; a sensor read is blocking"
            )
        self._thread = None
        for sensor in self._sensors:
            sensor.close()

    def __enter__(self) -> SystemMonitor:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def _run(self) -> None:
        announce_unavailable(self._sensors)
        for sensor in self._sensors:  # start per-thread windows (CPU usage) on this thread
            sensor.read()
        deadline = time.monotonic() + self._interval_s
        while not self._stop_event.wait(max(0.0, deadline - time.monotonic())):
            self.sample()
            deadline += self._interval_s
            now = time.monotonic()
            if deadline < now:  # fell behind: skip the missed samples instead of bunching them
                deadline = now + self._interval_s

    def _emit(self, records: list[MetricRecord]) -> None:
        for observer in list(self._observers):
            try:
                observer.on_records(records)
            except Exception:
                if id(observer) not in self._failed_observers:
                    self._failed_observers.add(id(observer))
                    logger.exception(
                        "torchtally SystemMonitor: observer %r raised in on_records; it keeps "
                        "receiving samples, further errors from it are not reported",
                        observer,
                    )
