"""`ProcessMemory` reads this process's resident set, not the machine's memory in use.

Oracle: the kernel's own count, `VmRSS` in /proc/self/status (Linux), read around the sensor."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from torchtally.metrics.system import CPUMemoryUsage, ProcessMemory, default_sensors

pytest.importorskip("psutil")


def _vm_rss_gib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024 / 2**30  # reported in kB
    raise AssertionError("no VmRSS line")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/status is Linux's")
def test_process_memory_is_this_processs_resident_set() -> None:
    sensor = ProcessMemory()
    sensor.read()  # the probe
    hold = bytearray(256 * 2**20)  # 256 MiB, touched, so resident
    hold[::4096] = b"\x01" * len(hold[::4096])
    before = _vm_rss_gib()
    (reading,) = sensor.read()
    after = _vm_rss_gib()
    assert reading.name == "process_memory" and reading.unit == "GiB"
    assert min(before, after) - 0.01 <= reading.value <= max(before, after) + 0.01
    (machine,) = [r for r in CPUMemoryUsage().read() if r.name == "cpu_memory_used"]
    assert reading.value < machine.value  # the process is part of the machine
    del hold


def test_the_default_sensors_include_the_process_memory() -> None:
    names = [s.name for s in default_sensors()]
    assert names.index("process_memory") == names.index("cpu_memory") + 1
