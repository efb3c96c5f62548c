"""`CPUTemperature`: the hottest reading of the CPU's package/core sensor, from psutil."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, final

from torchtally.metrics.system._psutil import load_psutil
from torchtally.metrics.system._sensor import Reading, Sensor, SensorUnavailable

__all__ = ["CPU_SENSOR_KEYS", "CPUTemperature"]

#: psutil sensor groups that measure the CPU, most specific first: Intel (coretemp), AMD
#: (k10temp, zenpower), ARM boards (cpu_thermal, cpu-thermal, soc_thermal) and the x86 package
#: thermal zone. Any other group with "cpu" in its name is accepted after these. Board sensors
#: such as "acpitz" are not the CPU and are never used.
CPU_SENSOR_KEYS = (
    "coretemp",
    "k10temp",
    "zenpower",
    "cpu_thermal",
    "cpu-thermal",
    "soc_thermal",
    "x86_pkg_temp",
)


def pick_cpu_sensor(temperatures: Mapping[str, Sequence[Any]]) -> str:
    """Choose the psutil sensor group that measures the CPU.

    Args:
        temperatures: What `psutil.sensors_temperatures()` returned.

    Returns:
        The key of the chosen group.

    Raises:
        SensorUnavailable: No group measures the CPU.

    Example:
        >>> pick_cpu_sensor({"acpitz": [object()], "coretemp": [object()]})
        'coretemp'
    """
    for key in CPU_SENSOR_KEYS:
        if temperatures.get(key):
            return key
    for key, entries in temperatures.items():
        if "cpu" in key.lower() and entries:
            return key
    if not temperatures:
        raise SensorUnavailable(
            "no temperature sensors: psutil.sensors_temperatures() returned nothing "
            "(virtual machines and containers usually expose no thermal sensors)"
        )
    raise SensorUnavailable(
        "no CPU temperature sensor among psutil.sensors_temperatures() groups "
        f"{sorted(temperatures)}; expected one of {list(CPU_SENSOR_KEYS)} or a name with 'cpu'"
    )


@final
class CPUTemperature(Sensor):
    """CPU temperature in °C: the maximum over the package and core readings of the CPU sensor
    group (see `CPU_SENSOR_KEYS`). Needs psutil on Linux or FreeBSD with thermal sensors exposed;
    elsewhere it is unavailable. Emits "cpu_temperature" (unit "°C").

    Example:
        >>> sensor = CPUTemperature()
        >>> readings = sensor.read()  # [] and one warning where no CPU sensor is exposed
        >>> sensor.available or bool(sensor.reason)
        True
    """

    def __init__(self) -> None:
        super().__init__("cpu_temperature")
        self._key = ""

    def _probe(self) -> None:
        psutil = load_psutil()
        if not hasattr(psutil, "sensors_temperatures"):
            raise SensorUnavailable(
                "psutil cannot read temperatures on this platform "
                "(psutil.sensors_temperatures exists on Linux and FreeBSD only)"
            )
        self._key = pick_cpu_sensor(psutil.sensors_temperatures())

    def _read(self) -> list[Reading]:
        entries = load_psutil().sensors_temperatures().get(self._key, [])
        values = [
            float(e.current) for e in entries if e.current is not None and math.isfinite(e.current)
        ]
        if not values:
            raise SensorUnavailable(f"the CPU sensor group {self._key!r} no longer reports")
        return [Reading(self.name, max(values), "°C")]
