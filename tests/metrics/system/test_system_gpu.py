"""GPU sensors. No GPU and no nvidia-ml-py here: the NVML path runs against a FAKE `pynvml`
module (a stand-in for nvidia-ml-py's documented API, injected through `sys.modules`), and the
unavailable paths run against a missing package and a failing `nvmlInit`."""

from __future__ import annotations

import importlib.util
import logging
import sys
import types
from collections import namedtuple

import pytest

from torchtally.metrics.system import (
    GPUMemory,
    GPUPower,
    GPUTemperature,
    GPUUtilization,
    Reading,
    default_sensors,
    gpu_sensors,
)

LOGGER = "torchtally.metrics.system"
Utilization = namedtuple("Utilization", ["gpu", "memory"])  # like nvmlUtilization_t
MemoryInfo = namedtuple("MemoryInfo", ["total", "free", "used"])  # like nvmlMemory_t


class FakeNVMLError(Exception):
    """Stands in for pynvml.NVMLError."""


def fake_pynvml(
    devices: list[dict[str, object]], init_error: str | None = None
) -> types.ModuleType:
    """A FAKE of nvidia-ml-py's `pynvml` API (not the library): each device dict holds what the
    real calls would return (temperature °C, utilization %, memory bytes, power mW); a value that
    is an exception is raised, as NVML raises NVMLError_NotSupported."""
    fake = types.ModuleType("pynvml")
    fake.NVML_TEMPERATURE_GPU = 0  # type: ignore[attr-defined]
    fake.NVMLError = FakeNVMLError  # type: ignore[attr-defined]
    fake.sessions = 0  # type: ignore[attr-defined]  # open nvmlInit minus nvmlShutdown

    def init() -> None:
        if init_error is not None:
            raise FakeNVMLError(init_error)
        fake.sessions += 1  # type: ignore[attr-defined]

    def shutdown() -> None:
        fake.sessions -= 1  # type: ignore[attr-defined]

    def value(handle: int, key: str) -> object:
        result = devices[handle][key]
        if isinstance(result, Exception):
            raise result
        return result

    def temperature(handle: int, sensor: int) -> object:
        assert sensor == fake.NVML_TEMPERATURE_GPU  # type: ignore[attr-defined]
        return value(handle, "temperature")

    fake.nvmlInit = init  # type: ignore[attr-defined]
    fake.nvmlShutdown = shutdown  # type: ignore[attr-defined]
    fake.nvmlDeviceGetCount = lambda: len(devices)  # type: ignore[attr-defined]
    fake.nvmlDeviceGetHandleByIndex = lambda i: i  # type: ignore[attr-defined]
    fake.nvmlDeviceGetTemperature = temperature  # type: ignore[attr-defined]
    fake.nvmlDeviceGetUtilizationRates = lambda h: value(h, "utilization")  # type: ignore[attr-defined]
    fake.nvmlDeviceGetMemoryInfo = lambda h: value(h, "memory")  # type: ignore[attr-defined]
    fake.nvmlDeviceGetPowerUsage = lambda h: value(h, "power")  # type: ignore[attr-defined]
    return fake


TWO_GPUS = [
    {
        "temperature": 67,
        "utilization": Utilization(gpu=83, memory=40),
        "memory": MemoryInfo(total=80 * 1024**3, free=68 * 1024**3, used=12 * 1024**3),
        "power": 245_500,
    },
    {
        "temperature": 41,
        "utilization": Utilization(gpu=0, memory=0),
        "memory": MemoryInfo(total=16 * 1024**3, free=12 * 1024**3, used=4 * 1024**3),
        "power": FakeNVMLError("Not Supported"),
    },
]


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER and r.levelname == "WARNING"]


def test_nvml_values_are_converted(monkeypatch: pytest.MonkeyPatch) -> None:
    nvml = fake_pynvml(TWO_GPUS)
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    assert GPUTemperature(0).read() == [Reading("gpu0_temperature", 67.0, "°C")]
    assert GPUUtilization(0).read() == [Reading("gpu0_utilization", 0.83, "%")]
    assert GPUMemory(0).read() == [
        Reading("gpu0_memory", 0.15, "%"),  # 12 GiB of 80 GiB
        Reading("gpu0_memory_used", 12.0, "GiB"),
    ]
    assert GPUPower(0).read() == [Reading("gpu0_power", 245.5, "W")]  # 245 500 mW
    assert GPUTemperature(1).read() == [Reading("gpu1_temperature", 41.0, "°C")]
    assert GPUMemory(1).read() == [
        Reading("gpu1_memory", 0.25, "%"),
        Reading("gpu1_memory_used", 4.0, "GiB"),
    ]


def test_nvml_sessions_are_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    nvml = fake_pynvml(TWO_GPUS)
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    sensors = gpu_sensors(0) + gpu_sensors(1)
    for sensor in sensors:
        sensor.read()
    assert nvml.sessions == 7  # type: ignore[attr-defined]  # gpu1_power was unsupported
    for sensor in sensors:
        sensor.close()
    assert nvml.sessions == 0  # type: ignore[attr-defined]


def test_unsupported_reading_is_unavailable_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml(TWO_GPUS))
    sensor = GPUPower(1)
    assert sensor.read() == [] and sensor.read() == []
    assert not sensor.available
    assert sensor.reason == "NVML cannot read the power of GPU 1: FakeNVMLError: Not Supported"
    assert len(warnings_of(caplog)) == 1


def test_missing_gpu_index(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml(TWO_GPUS))
    sensor = GPUTemperature(2)
    assert sensor.read() == []
    assert sensor.reason == "there is no GPU 2: NVML sees 2 GPUs"


def test_default_sensors_cover_every_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    nvml = fake_pynvml(TWO_GPUS)
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    names = [s.name for s in default_sensors()]
    assert names == [
        "cpu_usage",
        "cpu_temperature",
        "cpu_memory",
        "process_memory",
        *(f"gpu{i}_{q}" for i in (0, 1) for q in ("temperature", "utilization", "memory", "power")),
    ]
    assert nvml.sessions == 0  # type: ignore[attr-defined]  # counting closed its session


def test_error_while_reading_disables_the_sensor(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)
    devices = [dict(TWO_GPUS[0])]
    nvml = fake_pynvml(devices)
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    sensor = GPUTemperature(0)
    assert sensor.read() == [Reading("gpu0_temperature", 67.0, "°C")]
    devices[0]["temperature"] = FakeNVMLError("GPU is lost")
    assert sensor.read() == [] and sensor.read() == []
    assert sensor.reason == "disabled after an error while reading: FakeNVMLError: GPU is lost"
    assert nvml.sessions == 0  # type: ignore[attr-defined]  # disabling released the session
    (message,) = warnings_of(caplog)
    assert "gpu0_temperature" in message and "GPU is lost" in message


def test_without_nvidia_ml_py_gpu_sensors_say_what_to_install(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)
    monkeypatch.setitem(sys.modules, "pynvml", None)  # makes `import pynvml` raise ImportError
    for sensor in gpu_sensors(0):
        assert sensor.read() == [] and sensor.read() == []
        assert not sensor.available
        assert sensor.reason.startswith("nvidia-ml-py is not installed")
        assert "pip install torchtally[system]" in sensor.reason
    assert len(warnings_of(caplog)) == 4  # one per sensor read directly (a monitor groups them)


def test_nvml_init_failure_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml([], init_error="Driver Not Loaded"))
    sensor = GPUUtilization(0)
    assert sensor.read() == []
    assert sensor.reason == (
        "NVML could not be initialised (FakeNVMLError: Driver Not Loaded); "
        "GPU metrics need an NVIDIA GPU and driver"
    )


def test_gpu_index_is_checked() -> None:
    with pytest.raises(ValueError, match=r"`index` must be an integer >= 0.*index=-1"):
        GPUPower(-1)


def test_gpu_sensors_on_this_machine() -> None:
    """The real environment, no fake: here nvidia-ml-py is absent (and there is no GPU)."""
    sensors = gpu_sensors(0)
    readings = [r for s in sensors for r in s.read()]
    if importlib.util.find_spec("pynvml") is None:
        assert readings == []
        assert all(s.reason.startswith("nvidia-ml-py is not installed") for s in sensors)
    else:  # nvidia-ml-py present: either values in range or an NVML/driver reason
        for sensor in sensors:
            assert sensor.available or sensor.reason
        for reading in readings:
            assert reading.value >= 0 and (reading.unit != "%" or reading.value <= 1)
