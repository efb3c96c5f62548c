"""Per-GPU sensors read through NVML: temperature, utilisation, memory and power."""

from __future__ import annotations

from abc import abstractmethod
from types import ModuleType
from typing import Any, final

from torchtally._errors import check_int
from torchtally.metrics.system._cpu_memory import GIB
from torchtally.metrics.system._nvml import close_nvml, open_nvml
from torchtally.metrics.system._sensor import Reading, Sensor, SensorUnavailable

__all__ = ["GPUMemory", "GPUPower", "GPUSensor", "GPUTemperature", "GPUUtilization"]


class GPUSensor(Sensor):
    """A reading of GPU `index` through NVML. The probe opens an NVML session, finds the device
    and reads once, so a GPU that does not support the reading is unavailable from the start.

    Args:
        index: NVML device index (0-based; NVML ignores CUDA_VISIBLE_DEVICES).
        quantity: What is read; the metric name is f"gpu{index}_{quantity}".
    """

    def __init__(self, index: int, quantity: str) -> None:
        check_int("index", index, 0)
        super().__init__(f"gpu{index}_{quantity}")
        self.index = index
        self._quantity = quantity
        self._nvml: ModuleType | None = None
        self._handle: Any = None

    def _probe(self) -> None:
        nvml = open_nvml()
        try:
            count = int(nvml.nvmlDeviceGetCount())
            if self.index >= count:
                raise SensorUnavailable(
                    f"there is no GPU {self.index}: NVML sees {count} GPU{'s' * (count != 1)}"
                )
            handle = nvml.nvmlDeviceGetHandleByIndex(self.index)
            self._query(nvml, handle)
        except SensorUnavailable:
            close_nvml(nvml)
            raise
        except Exception as err:
            close_nvml(nvml)
            raise SensorUnavailable(
                f"NVML cannot read the {self._quantity} of GPU {self.index}: "
                f"{type(err).__name__}: {err}"
            ) from err
        self._nvml, self._handle = nvml, handle

    def _read(self) -> list[Reading]:
        assert self._nvml is not None  # set by a successful probe
        return self._query(self._nvml, self._handle)

    def _release(self) -> None:
        if self._nvml is not None:
            close_nvml(self._nvml)
        self._nvml, self._handle = None, None

    @abstractmethod
    def _query(self, nvml: ModuleType, handle: Any) -> list[Reading]:
        """Read the quantity from the device `handle`."""


@final
class GPUTemperature(GPUSensor):
    """GPU core temperature in °C (`nvmlDeviceGetTemperature(h, NVML_TEMPERATURE_GPU)`).
    Emits f"gpu{index}_temperature" (unit "°C").

    Args:
        index: NVML device index.

    Example:
        >>> GPUTemperature(0).read()  # [] and one warning on a machine without NVIDIA GPUs
        []
    """

    def __init__(self, index: int = 0) -> None:
        super().__init__(index, "temperature")

    def _query(self, nvml: ModuleType, handle: Any) -> list[Reading]:
        celsius = nvml.nvmlDeviceGetTemperature(handle, nvml.NVML_TEMPERATURE_GPU)
        return [Reading(self.name, float(celsius), "°C")]


@final
class GPUUtilization(GPUSensor):
    """Fraction of the last sample period in which a kernel ran on the GPU
    (`nvmlDeviceGetUtilizationRates(h).gpu` / 100). Emits f"gpu{index}_utilization" (unit "%").

    Args:
        index: NVML device index.

    Example:
        >>> GPUUtilization(0).read()  # [] and one warning on a machine without NVIDIA GPUs
        []
    """

    def __init__(self, index: int = 0) -> None:
        super().__init__(index, "utilization")

    def _query(self, nvml: ModuleType, handle: Any) -> list[Reading]:
        percent = nvml.nvmlDeviceGetUtilizationRates(handle).gpu
        return [Reading(self.name, float(percent) / 100.0, "%")]


@final
class GPUMemory(GPUSensor):
    """GPU memory in use (`nvmlDeviceGetMemoryInfo(h)`, all processes). Emits
    f"gpu{index}_memory" (used / total, unit "%") and f"gpu{index}_memory_used" (unit "GiB").

    Args:
        index: NVML device index.

    Example:
        >>> GPUMemory(0).read()  # [] and one warning on a machine without NVIDIA GPUs
        []
    """

    def __init__(self, index: int = 0) -> None:
        super().__init__(index, "memory")

    def _query(self, nvml: ModuleType, handle: Any) -> list[Reading]:
        info = nvml.nvmlDeviceGetMemoryInfo(handle)
        used, total = float(info.used), float(info.total)
        return [
            Reading(self.name, used / total, "%"),
            Reading(f"{self.name}_used", used / GIB, "GiB"),
        ]


@final
class GPUPower(GPUSensor):
    """GPU board power draw in watts (`nvmlDeviceGetPowerUsage(h)`, milliwatts, / 1000).
    Emits f"gpu{index}_power" (unit "W").

    Args:
        index: NVML device index.

    Example:
        >>> GPUPower(0).read()  # [] and one warning on a machine without NVIDIA GPUs
        []
    """

    def __init__(self, index: int = 0) -> None:
        super().__init__(index, "power")

    def _query(self, nvml: ModuleType, handle: Any) -> list[Reading]:
        milliwatts = nvml.nvmlDeviceGetPowerUsage(handle)
        return [Reading(self.name, float(milliwatts) / 1000.0, "W")]
