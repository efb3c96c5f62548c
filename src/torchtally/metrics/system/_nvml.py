"""NVML sessions for the GPU sensors, through nvidia-ml-py (imported lazily as `pynvml`).

NVML reference-counts `nvmlInit`/`nvmlShutdown`, so every sensor opens its own session and
closes it when released.
"""

from __future__ import annotations

from types import ModuleType
from typing import cast

from torchtally.metrics.system._sensor import SensorUnavailable, logger

__all__ = ["NVML_MISSING", "close_nvml", "nvml_device_count", "open_nvml"]

NVML_MISSING = (
    "nvidia-ml-py is not installed; install it with `pip install torchtally[system]` "
    "(or `pip install nvidia-ml-py`)"
)


def open_nvml() -> ModuleType:
    """Import pynvml and initialise NVML; pair every successful call with `close_nvml`.

    Returns:
        The pynvml module, initialised.

    Raises:
        SensorUnavailable: nvidia-ml-py is missing or NVML cannot start (no NVIDIA driver).

    Example:
        >>> # skipped when run as a doctest: it needs an NVIDIA GPU and driver
        >>> nvml = open_nvml()  # doctest: +SKIP
        >>> count = nvml.nvmlDeviceGetCount()  # doctest: +SKIP
        >>> close_nvml(nvml)  # doctest: +SKIP
    """
    try:
        import pynvml
    except ImportError as err:
        raise SensorUnavailable(NVML_MISSING) from err
    try:
        pynvml.nvmlInit()
    except Exception as err:
        raise SensorUnavailable(
            f"NVML could not be initialised ({type(err).__name__}: {err}); "
            "GPU metrics need an NVIDIA GPU and driver"
        ) from err
    return cast(ModuleType, pynvml)


def close_nvml(nvml: ModuleType) -> None:
    """End one NVML session opened by `open_nvml` (errors are logged at debug level).

    Args:
        nvml: The module `open_nvml` returned.

    Example:
        >>> # skipped when run as a doctest: it needs an NVIDIA GPU and driver
        >>> close_nvml(open_nvml())  # doctest: +SKIP
    """
    try:
        nvml.nvmlShutdown()
    except Exception:
        logger.debug("nvmlShutdown failed", exc_info=True)


def nvml_device_count() -> tuple[int, str]:
    """How many GPUs NVML sees.

    Returns:
        (count, reason): the count, and "" or why it is 0 (missing package, no driver).

    Example:
        >>> count, reason = nvml_device_count()  # (0, "nvidia-ml-py is not installed; ...")
    """
    try:
        nvml = open_nvml()
    except SensorUnavailable as err:
        return 0, str(err)
    try:
        count = int(nvml.nvmlDeviceGetCount())
    except Exception as err:
        return 0, f"NVML could not count GPUs: {type(err).__name__}: {err}"
    finally:
        close_nvml(nvml)
    return count, "" if count else "NVML sees no GPU"
