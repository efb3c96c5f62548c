"""`default_sensors`: every sensor this package has, for the CPU and for each GPU."""

from __future__ import annotations

from torchtally.metrics.system._cpu_memory import CPUMemoryUsage
from torchtally.metrics.system._cpu_temperature import CPUTemperature
from torchtally.metrics.system._cpu_usage import CPUUsage
from torchtally.metrics.system._gpu import GPUMemory, GPUPower, GPUTemperature, GPUUtilization
from torchtally.metrics.system._nvml import nvml_device_count
from torchtally.metrics.system._process_memory import ProcessMemory
from torchtally.metrics.system._sensor import Sensor

__all__ = ["default_sensors", "gpu_sensors"]


def gpu_sensors(index: int) -> list[Sensor]:
    """The four NVML sensors of GPU `index`.

    Args:
        index: NVML device index.

    Returns:
        [GPUTemperature, GPUUtilization, GPUMemory, GPUPower] of that GPU.

    Example:
        >>> [s.name for s in gpu_sensors(1)]
        ['gpu1_temperature', 'gpu1_utilization', 'gpu1_memory', 'gpu1_power']
    """
    return [GPUTemperature(index), GPUUtilization(index), GPUMemory(index), GPUPower(index)]


def default_sensors() -> list[Sensor]:
    """The CPU sensors plus the GPU sensors of every GPU NVML sees. Where NVML sees none (no GPU,
    no driver, nvidia-ml-py missing) the GPU 0 sensors are included anyway, so that the reason
    is announced once instead of GPU metrics silently missing.

    Returns:
        The sensors, CPU first.

    Example:
        >>> [s.name for s in default_sensors()][:3]
        ['cpu_usage', 'cpu_temperature', 'cpu_memory']
    """
    count, _ = nvml_device_count()
    sensors: list[Sensor] = [CPUUsage(), CPUTemperature(), CPUMemoryUsage(), ProcessMemory()]
    for index in range(max(count, 1)):
        sensors.extend(gpu_sensors(index))
    return sensors
