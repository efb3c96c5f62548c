"""`Sensor`: one machine reading (CPU or GPU) that says once, and why, when it cannot read.

A sensor is probed lazily, the first time it is asked for anything. A sensor that does not exist
on this machine (no thermal zones, no GPU, a missing optional package) is *unavailable*: it logs
one line with the reason, answers `available == False` and `reason`, and records nothing. A
sensor whose read raises is disabled the same way instead of propagating the error: a sampler
thread must outlive a flaky sensor.
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Reading", "Sensor", "SensorUnavailable", "announce_unavailable", "logger"]

#: Where unavailable and disabled sensors are announced (one warning each).
logger = logging.getLogger("torchtally.metrics.system")


@dataclass(frozen=True)
class Reading:
    """One value read from a sensor.

    Attributes:
        name: Metric name, e.g. "cpu_usage" or "gpu0_power".
        value: The value; percentages are fractions in [0, 1].
        unit: Display unit ("%", "°C", "GiB", "W").
    """

    name: str
    value: float
    unit: str


class SensorUnavailable(Exception):
    """Raised by a sensor's probe or read when the reading does not exist on this machine.

    The message is the reason shown to the user, so it says what is missing and how to get it.
    """


class Sensor(ABC):
    """A machine reading, sampled by `SystemMonitor` or read directly with `read()`.

    Subclasses implement `_probe` (acquire what reading needs, or raise `SensorUnavailable`) and
    `_read` (return the current readings), and may override `_release`. All public methods are
    thread-safe.

    Args:
        name: The sensor's name, used in messages; also its main metric name.

    Example:
        >>> from torchtally.metrics.system import CPUUsage
        >>> sensor = CPUUsage()
        >>> readings = sensor.read()  # [] while unavailable, or on a thread's first read
        >>> sensor.available in (True, False)
        True
    """

    def __init__(self, name: str) -> None:
        self._name = name
        self._lock = threading.RLock()
        self._probed = False
        self._reason: str | None = None
        self._announced = False

    @property
    def name(self) -> str:
        """The sensor's name (its main metric name)."""
        return self._name

    @property
    def available(self) -> bool:
        """Whether the sensor can read on this machine (probes it on first use)."""
        with self._lock:
            self._ensure_probed()
            return self._reason is None

    @property
    def reason(self) -> str:
        """Why the sensor is unavailable or disabled; "" while it is available."""
        with self._lock:
            self._ensure_probed()
            return self._reason or ""

    def read(self) -> list[Reading]:
        """Read the sensor now.

        Returns:
            The current readings, or [] when the sensor is unavailable (announced once) or was
            disabled by an error (announced once).
        """
        with self._lock:
            self._ensure_probed()
            if self._reason is None:
                try:
                    return self._read()
                except SensorUnavailable as err:
                    self._disable(str(err))
                except Exception as err:
                    self._disable(
                        f"disabled after an error while reading: {type(err).__name__}: {err}"
                    )
            announce_unavailable([self])
            return []

    def close(self) -> None:
        """Release what probing acquired (e.g. an NVML session). The next use probes again, but a
        sensor that was already announced as unavailable stays quiet."""
        with self._lock:
            if self._probed and self._reason is None:
                self._release()
            self._probed = False
            self._reason = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self._name!r})"

    @abstractmethod
    def _probe(self) -> None:
        """Acquire what reading needs; raise `SensorUnavailable` with the reason if it cannot."""

    @abstractmethod
    def _read(self) -> list[Reading]:
        """Return the current readings (called only after a successful probe)."""

    def _release(self) -> None:
        """Release what `_probe` acquired (default: nothing)."""
        return None

    def _ensure_probed(self) -> None:
        if self._probed:
            return
        self._probed = True
        try:
            self._probe()
        except SensorUnavailable as err:
            self._reason = str(err)
        except Exception as err:
            self._reason = f"probing failed: {type(err).__name__}: {err}"

    def _disable(self, reason: str) -> None:
        self._reason = reason
        try:
            self._release()
        except Exception:
            logger.debug("releasing sensor %s failed", self._name, exc_info=True)


def announce_unavailable(sensors: Sequence[Sensor]) -> list[Sensor]:
    """Probe `sensors` and log, once per sensor over its lifetime, those that cannot read.

    Sensors that share a reason (e.g. every GPU sensor when nvidia-ml-py is missing) are named
    together in one line.

    Args:
        sensors: The sensors to probe.

    Returns:
        The sensors that are unavailable (announced now or earlier).

    Example:
        >>> from torchtally.metrics.system import GPUPower
        >>> unavailable = announce_unavailable([GPUPower(0)])  # logs once if there is no GPU
    """
    by_reason: dict[str, list[str]] = {}
    unavailable = []
    for sensor in sensors:
        with sensor._lock:
            sensor._ensure_probed()
            if sensor._reason is None:
                continue
            unavailable.append(sensor)
            if not sensor._announced:
                sensor._announced = True
                by_reason.setdefault(sensor._reason, []).append(sensor.name)
    for reason, names in by_reason.items():
        logger.warning(
            "torchtally system metric%s %s unavailable, recording nothing: %s",
            "s" if len(names) > 1 else "",
            ", ".join(names),
            reason,
        )
    return unavailable
