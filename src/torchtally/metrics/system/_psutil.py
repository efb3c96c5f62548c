"""Lazy import of psutil, the optional package behind the CPU sensors."""

from __future__ import annotations

from types import ModuleType
from typing import cast

from torchtally.metrics.system._sensor import SensorUnavailable

__all__ = ["PSUTIL_MISSING", "load_psutil"]

PSUTIL_MISSING = (
    "psutil is not installed; install it with `pip install torchtally[system]` "
    "(or `pip install psutil`)"
)


def load_psutil() -> ModuleType:
    """Import psutil.

    Returns:
        The psutil module.

    Raises:
        SensorUnavailable: psutil is not installed (the message says what to install).

    Example:
        >>> psutil = load_psutil()
    """
    try:
        import psutil
    except ImportError as err:
        raise SensorUnavailable(PSUTIL_MISSING) from err
    return cast(ModuleType, psutil)
