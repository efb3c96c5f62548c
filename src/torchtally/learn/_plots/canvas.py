"""Matplotlib plumbing for the plots: figures on the Agg canvas (no pyplot, so the user's
backend and global state are untouched), PNG output, and how units are displayed."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["DPI", "axis_label", "display_scale", "new_figure", "safe_name", "save_png"]

#: Resolution of the PNGs.
DPI = 110


def new_figure(width: float, height: float) -> Figure:
    """A figure attached to its own Agg canvas.

    Args:
        width: Width in inches.
        height: Height in inches.

    Returns:
        The figure (constrained layout).

    Raises:
        ImportError: matplotlib is not installed (the message says what to install).

    Example:
        >>> fig = new_figure(6, 4)
        >>> ax = fig.subplots()
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as err:
        raise ImportError(
            "Plotting learner logs needs matplotlib, which is not installed. "
            "Install it with `pip install torchtally[plots]`."
        ) from err
    figure = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def save_png(figure: Figure, path: Path) -> Path:
    """Write `figure` as a PNG.

    Args:
        figure: A figure from `new_figure`.
        path: Where to write.

    Returns:
        `path`.

    Example:
        >>> save_png(new_figure(4, 3), Path("empty.png"))
        PosixPath('empty.png')
    """
    figure.savefig(path, format="png", dpi=DPI)
    return path


def display_scale(unit: str) -> float:
    """Factor from a logged value to its displayed value: percentages are logged as fractions
    and displayed ×100.

    Args:
        unit: The record's unit.

    Returns:
        100.0 for "%", else 1.0.

    Example:
        >>> display_scale("%"), display_scale("W")
        (100.0, 1.0)
    """
    return 100.0 if unit == "%" else 1.0


def axis_label(name: str, unit: str) -> str:
    """An axis label: the name with its unit in parentheses when it has one.

    Args:
        name: Metric name.
        unit: Display unit.

    Returns:
        The label.

    Example:
        >>> axis_label("gpu0_power", "W")
        'gpu0_power (W)'
    """
    return f"{name} ({unit})" if unit else name


def safe_name(name: str) -> str:
    """A file-name-safe form of a metric or split name.

    Args:
        name: The name.

    Returns:
        Letters, digits, "-", "_" and "." kept; runs of anything else become "_".

    Example:
        >>> safe_name("top-5 acc/val")
        'top-5_acc_val'
    """
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "metric"
