"""CPU sensors on this machine (real psutil), plus the sensor-choice logic against a fake of
psutil's `sensors_temperatures` API (this VM exposes no thermal sensors)."""

from __future__ import annotations

import logging
import sys
import threading
import time
import types
from collections import namedtuple

import psutil
import pytest

from torchtally.metrics.system import CPUMemoryUsage, CPUTemperature, CPUUsage, Reading
from torchtally.metrics.system._cpu_temperature import CPU_SENSOR_KEYS
from torchtally.metrics.system._cpu_usage import MIN_WINDOW_S

LOGGER = "torchtally.metrics.system"
GIB = 1024**3
# Same shape as psutil's `shwtemp` namedtuple.
Temp = namedtuple("Temp", ["label", "current", "high", "critical"])


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER and r.levelname == "WARNING"]


def fake_psutil(temperatures: object) -> types.ModuleType:
    """A FAKE of psutil's API: only `sensors_temperatures()` (a dict or a callable giving one)."""
    fake = types.ModuleType("psutil")
    fake.sensors_temperatures = (  # type: ignore[attr-defined]
        temperatures if callable(temperatures) else lambda: temperatures
    )
    return fake


def test_cpu_usage_is_a_fraction_matching_cpu_times() -> None:
    sensor = CPUUsage()
    assert sensor.available and sensor.reason == ""  # the probe started this thread's window
    time.sleep(MIN_WINDOW_S)
    before = psutil.cpu_times()
    sensor.read()  # restart the window right after `before`
    end = time.perf_counter() + 0.3
    while time.perf_counter() < end:  # keep one core busy
        pass
    (reading,) = sensor.read()
    after = psutil.cpu_times()
    total = sum(after) - sum(before) - (after.guest - before.guest)
    total -= after.guest_nice - before.guest_nice
    idle = (after.idle - before.idle) + (after.iowait - before.iowait)
    expected = 1.0 - idle / total
    assert reading.name == "cpu_usage" and reading.unit == "%"
    assert 0.0 <= reading.value <= 1.0
    assert reading.value == pytest.approx(expected, abs=0.15)
    assert reading.value > 0.2  # one of this machine's cores was busy the whole window


def test_cpu_usage_needs_a_window_on_each_thread() -> None:
    sensor = CPUUsage()
    assert sensor.available  # starts the window on this thread only
    results: list[list[Reading]] = []
    worker = threading.Thread(target=lambda: results.append(sensor.read()))
    worker.start()
    worker.join(5)
    assert results == [[]]  # a new thread: its first read only starts its window
    time.sleep(2 * MIN_WINDOW_S)
    (reading,) = sensor.read()
    assert reading.name == "cpu_usage" and 0.0 <= reading.value <= 1.0
    assert sensor.read() == []  # immediately after: the window is shorter than MIN_WINDOW_S


def test_cpu_memory_matches_virtual_memory() -> None:
    fraction, used = CPUMemoryUsage().read()
    memory = psutil.virtual_memory()
    assert (fraction.name, fraction.unit) == ("cpu_memory", "%")
    assert (used.name, used.unit) == ("cpu_memory_used", "GiB")
    assert 0.0 < fraction.value <= 1.0
    assert 0.0 < used.value <= memory.total / GIB
    assert fraction.value == pytest.approx(memory.percent / 100, abs=0.02)
    assert used.value == pytest.approx(
        (memory.total - memory.available) / GIB, abs=0.02 * memory.total / GIB
    )
    assert used.value == pytest.approx(fraction.value * memory.total / GIB, rel=1e-9)


def test_cpu_temperature_on_this_machine(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)
    groups = psutil.sensors_temperatures() if hasattr(psutil, "sensors_temperatures") else {}
    cpu_groups = [k for k in groups if (k in CPU_SENSOR_KEYS or "cpu" in k.lower()) and groups[k]]
    sensor = CPUTemperature()
    readings = sensor.read() + sensor.read() + sensor.read()
    if cpu_groups:  # a machine with a CPU thermal sensor
        assert sensor.available
        hottest = max(t.current for t in groups[cpu_groups[0]])
        assert all(r.name == "cpu_temperature" and r.unit == "°C" for r in readings)
        assert readings[0].value == pytest.approx(hottest, abs=5.0)
        assert warnings_of(caplog) == []
    else:  # this VM: psutil.sensors_temperatures() == {} -> unavailable, said once, no values
        assert not sensor.available
        assert "no temperature sensors" in sensor.reason
        assert readings == []
        (message,) = warnings_of(caplog)
        assert "cpu_temperature" in message and sensor.reason in message


def test_cpu_temperature_picks_the_cpu_group_and_its_hottest_core(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    groups = {
        "acpitz": [Temp("", 95.0, None, None)],  # board sensor: hotter, but not the CPU
        "coretemp": [
            Temp("Package id 0", 61.0, 80.0, 100.0),
            Temp("Core 0", 58.0, 80.0, 100.0),
            Temp("Core 1", 64.5, 80.0, 100.0),
        ],
    }
    monkeypatch.setitem(sys.modules, "psutil", fake_psutil(groups))
    assert CPUTemperature().read() == [Reading("cpu_temperature", 64.5, "°C")]


@pytest.mark.parametrize(
    ("groups", "expected"),
    [
        ({"k10temp": [Temp("Tctl", 71.25, None, None), Temp("Tccd1", 66.0, None, None)]}, 71.25),
        ({"cpu_thermal": [Temp("", 48.3, None, None)]}, 48.3),
        (
            {
                "nvme": [Temp("Composite", 40.0, None, None)],
                "my_cpu_zone": [Temp("", 52.0, None, None)],
            },
            52.0,
        ),
    ],
)
def test_cpu_temperature_other_vendors(
    monkeypatch: pytest.MonkeyPatch, groups: dict[str, list[Temp]], expected: float
) -> None:
    monkeypatch.setitem(sys.modules, "psutil", fake_psutil(groups))
    (reading,) = CPUTemperature().read()
    assert reading.value == expected


def test_cpu_temperature_without_a_cpu_group_is_unavailable(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)
    groups = {"acpitz": [Temp("", 27.8, None, None)], "nvme": [Temp("", 40.0, None, None)]}
    monkeypatch.setitem(sys.modules, "psutil", fake_psutil(groups))
    sensor = CPUTemperature()
    assert sensor.read() == [] and sensor.read() == []
    assert not sensor.available
    assert "['acpitz', 'nvme']" in sensor.reason and "coretemp" in sensor.reason
    assert len(warnings_of(caplog)) == 1


def test_cpu_temperature_on_a_platform_without_the_api(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "psutil", types.ModuleType("psutil"))  # FAKE: macOS-like
    sensor = CPUTemperature()
    assert sensor.read() == []
    assert "Linux and FreeBSD only" in sensor.reason


def test_sensor_error_disables_it_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)
    calls = []

    def flaky() -> dict[str, list[Temp]]:
        calls.append(1)
        if len(calls) > 2:
            raise OSError("sysfs went away")
        return {"coretemp": [Temp("Core 0", 50.0, None, None)]}

    monkeypatch.setitem(sys.modules, "psutil", fake_psutil(flaky))
    sensor = CPUTemperature()
    assert sensor.read() == [Reading("cpu_temperature", 50.0, "°C")]  # probe + read: 2 calls
    assert sensor.read() == [] and sensor.read() == []
    assert not sensor.available
    assert sensor.reason == "disabled after an error while reading: OSError: sysfs went away"
    assert len(calls) == 3  # disabled sensors are not read again
    (message,) = warnings_of(caplog)
    assert "sysfs went away" in message


def test_without_psutil_every_cpu_sensor_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)
    monkeypatch.setitem(sys.modules, "psutil", None)  # makes `import psutil` raise ImportError
    for sensor in (CPUUsage(), CPUTemperature(), CPUMemoryUsage()):
        assert sensor.read() == [] and sensor.read() == []
        assert not sensor.available
        assert "psutil is not installed" in sensor.reason
        assert "pip install torchtally[system]" in sensor.reason
    assert len(warnings_of(caplog)) == 3
