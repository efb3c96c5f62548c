"""`CPUMemoryUsage`: RAM in use, as a fraction of the total and in GiB, from psutil."""

from __future__ import annotations

from typing import final

from torchtally.metrics.system._psutil import load_psutil
from torchtally.metrics.system._sensor import Reading, Sensor

__all__ = ["GIB", "CPUMemoryUsage"]

#: Bytes per GiB.
GIB = float(1 << 30)


@final
class CPUMemoryUsage(Sensor):
    """Host memory in use. "Used" is total − available (memory not available to new allocations
    without swapping), the quantity behind `psutil.virtual_memory().percent`. Emits
    "cpu_memory" (used / total, unit "%") and "cpu_memory_used" (used, unit "GiB").

    Example:
        >>> sensor = CPUMemoryUsage()
        >>> [r.name for r in sensor.read()]
        ['cpu_memory', 'cpu_memory_used']
    """

    def __init__(self) -> None:
        super().__init__("cpu_memory")

    def _probe(self) -> None:
        load_psutil().virtual_memory()

    def _read(self) -> list[Reading]:
        memory = load_psutil().virtual_memory()
        used = float(memory.total - memory.available)
        return [
            Reading(self.name, used / float(memory.total), "%"),
            Reading("cpu_memory_used", used / GIB, "GiB"),
        ]
