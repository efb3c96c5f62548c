"""System metrics: CPU and GPU sensors sampled off the training path (Burn's CPU Temperature, CPU
Usage, CPU Memory Usage, GPU Temperature and CUDA metrics).

CPU sensors need psutil and GPU sensors need nvidia-ml-py (`pip install torchtally[system]`).
A sensor that cannot read on this machine says so once, with the reason, and records nothing.
Percentages are fractions in [0, 1] with unit "%".

Example:
    >>> from torchtally.learn import SummaryTable
    >>> from torchtally.metrics.system import CPUMemoryUsage, SystemMonitor
    >>> table = SummaryTable()  # or the learner's observers: `learner.observers`
    >>> with SystemMonitor([CPUMemoryUsage()], interval_s=1.0, observers=[table]) as monitor:
    ...     pass  # train here; a sample every second goes to the observers
    >>> monitor.running
    False
"""

from torchtally.metrics.system._cpu_memory import CPUMemoryUsage
from torchtally.metrics.system._cpu_temperature import CPUTemperature
from torchtally.metrics.system._cpu_usage import CPUUsage
from torchtally.metrics.system._defaults import default_sensors, gpu_sensors
from torchtally.metrics.system._gpu import (
    GPUMemory,
    GPUPower,
    GPUSensor,
    GPUTemperature,
    GPUUtilization,
)
from torchtally.metrics.system._monitor import SystemMonitor
from torchtally.metrics.system._process_memory import ProcessMemory
from torchtally.metrics.system._sensor import Reading, Sensor, SensorUnavailable

__all__ = [
    "CPUMemoryUsage",
    "CPUTemperature",
    "CPUUsage",
    "GPUMemory",
    "GPUPower",
    "GPUSensor",
    "GPUTemperature",
    "GPUUtilization",
    "ProcessMemory",
    "Reading",
    "Sensor",
    "SensorUnavailable",
    "SystemMonitor",
    "default_sensors",
    "gpu_sensors",
]
