"""How the dashboard and the plain renderer write numbers: metric values, rates and durations.

Percentages arrive as fractions in [0, 1] (unit "%") and are shown ×100, as Burn shows them.
"""

from __future__ import annotations

import math

__all__ = [
    "MACHINE_WIDE",
    "display_value",
    "format_duration",
    "format_rate",
    "format_value",
    "pretty_name",
    "qualified_name",
]

# Units written straight after the number; the others get a space ("12.3 GiB").
_TIGHT_UNITS = ("%", "°C", "°F")


def display_value(value: float, unit: str) -> float:
    """The number to show or plot for a value: ×100 for percentages, unchanged otherwise.

    Args:
        value: The logged value (a fraction when `unit` is "%").
        unit: Its display unit.

    Returns:
        The value in display units.

    Example:
        >>> display_value(0.875, "%")
        87.5
    """
    return value * 100.0 if unit == "%" else value


def format_value(value: float, unit: str = "") -> str:
    """A metric value for display, with its unit.

    Args:
        value: The logged value (a fraction when `unit` is "%").
        unit: Display unit ("", "%", "°C", "GiB", "W", ...).

    Returns:
        Two decimals for percentages ("87.50%"), one for other units ("61.0°C", "12.3 GiB"),
        otherwise three decimals below 100 and one above ("0.412", "12.346", "1234.5"), and
        scientific notation for very small or large magnitudes.

    Example:
        >>> format_value(0.875, "%"), format_value(0.41234), format_value(61.0, "°C")
        ('87.50%', '0.412', '61.0°C')
    """
    if unit == "%":
        number = "nan" if math.isnan(value) else f"{value * 100:.2f}"
    elif unit and math.isfinite(value) and 1e-3 <= abs(value) < 1e6:
        number = f"{value:.1f}"  # machine readings: one decimal is plenty
    else:
        number = _number(value)
    if not unit:
        return number
    return number + unit if unit in _TIGHT_UNITS else f"{number} {unit}"


def format_duration(seconds: float | None) -> str:
    """A duration as H:MM:SS (with a day count past 24 hours), "?" when unknown.

    Args:
        seconds: The duration, or None.

    Returns:
        E.g. "0:00:12", "1:02:03", "2d 3:04:05".

    Example:
        >>> format_duration(12.4), format_duration(None)
        ('0:00:12', '?')
    """
    if seconds is None or not math.isfinite(seconds) or seconds < 0:
        return "?"
    total = round(seconds)
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    clock = f"{hours}:{minutes:02d}:{secs:02d}"
    return f"{days}d {clock}" if days else clock


def format_rate(samples_per_second: float | None, steps_per_second: float | None) -> str:
    """Throughput: samples/s when the learner measured it, else steps (it/s), else "".

    Args:
        samples_per_second: Smoothed samples per second, or None.
        steps_per_second: Steps per second, or None.

    Returns:
        E.g. "1234 samples/s", "3.21 it/s" or "".

    Example:
        >>> format_rate(1234.4, 3.0), format_rate(None, 3.214)
        ('1234 samples/s', '3.21 it/s')
    """
    if samples_per_second is not None and math.isfinite(samples_per_second):
        return f"{samples_per_second:.0f} samples/s"
    if steps_per_second is not None and math.isfinite(steps_per_second):
        digits = 0 if steps_per_second >= 100 else 2
        return f"{steps_per_second:.{digits}f} it/s"
    return ""


#: The system metrics that measure the whole machine rather than the training process
#: (psutil's `virtual_memory`: the memory every process uses), with their dashboard labels, so
#: that no one reads them as the process's own.
MACHINE_WIDE = {
    "cpu_memory": "machine memory",
    "cpu_memory_used": "machine memory used",
}


def pretty_name(name: str) -> str:
    """A metric name for a label: underscores become spaces ("cpu_usage" -> "cpu usage"); the
    machine-wide memory metrics say so ("cpu_memory_used" -> "machine memory used").

    Args:
        name: The metric name.

    Returns:
        The label.

    Example:
        >>> pretty_name("gpu0_memory_used"), pretty_name("cpu_memory_used")
        ('gpu0 memory used', 'machine memory used')
    """
    return MACHINE_WIDE.get(name, name.replace("_", " "))


def qualified_name(name: str) -> str:
    """A metric name as logged, marked "(machine)" when it measures the whole machine (for
    tables and plots that show the logged names).

    Args:
        name: The metric name.

    Returns:
        The label.

    Example:
        >>> qualified_name("cpu_memory_used"), qualified_name("cpu_usage")
        ('cpu_memory_used (machine)', 'cpu_usage')
    """
    return f"{name} (machine)" if name in MACHINE_WIDE else name


def _number(value: float) -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    magnitude = abs(value)
    if magnitude == 0:
        return "0"
    if magnitude >= 1e6 or magnitude < 1e-3:
        return f"{value:.3e}"
    if magnitude >= 100:
        return f"{value:.1f}"
    return f"{value:.3f}"
