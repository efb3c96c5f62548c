"""`ProcessMemory`: the memory the training process itself holds (its resident set), from psutil."""

from __future__ import annotations

from typing import Any, final

from torchtally.metrics.system._cpu_memory import GIB
from torchtally.metrics.system._psutil import load_psutil
from torchtally.metrics.system._sensor import Reading, Sensor

__all__ = ["ProcessMemory"]


@final
class ProcessMemory(Sensor):
    """This process's resident set size (RSS: its pages in RAM), in GiB, as
    `psutil.Process().memory_info().rss` gives it. Emits "process_memory" (unit "GiB"); the
    machine's memory in use is `CPUMemoryUsage`'s "cpu_memory_used".

    Example:
        >>> sensor = ProcessMemory()
        >>> [r.name for r in sensor.read()]
        ['process_memory']
    """

    def __init__(self) -> None:
        super().__init__("process_memory")
        self._process: Any = None

    def _probe(self) -> None:
        # the sampler thread runs in the training process, so this is the process to measure
        self._process = load_psutil().Process()
        self._process.memory_info()

    def _read(self) -> list[Reading]:
        return [Reading(self.name, float(self._process.memory_info().rss) / GIB, "GiB")]
