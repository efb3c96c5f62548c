"""Line plots of logged values: one figure per metric (a panel per split, x = step) and one
figure of the system samples (x = seconds since the first sample), each with epoch markers."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from torchtally._records import MetricRecord
from torchtally.learn._format import format_value
from torchtally.learn._plots.canvas import axis_label, display_scale, new_figure, save_png

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_metric", "plot_system"]

_MARKER_LIMIT = 60  # draw point markers up to this many points (per-epoch values)
_EPOCH_LABELS = 12  # at most this many epoch labels on the top axis


def plot_metric(name: str, by_split: Mapping[str, Sequence[MetricRecord]], path: Path) -> Path:
    """One metric's curves: a panel per split (steps are counted per split), x = step, with
    the epochs marked on a top axis and by dotted lines where each epoch starts.

    Args:
        name: The metric name.
        by_split: Split -> its records of this metric, in display order.
        path: Where to write the PNG.

    Returns:
        `path`.

    Example:
        >>> train_loss = [MetricRecord("train", e, 10 * e, "loss", 1 / e, 0.0) for e in (1, 2, 3)]
        >>> valid_loss = [MetricRecord("valid", e, e, "loss", 1.2 / e, 0.0) for e in (1, 2, 3)]
        >>> plot_metric("loss", {"train": train_loss, "valid": valid_loss}, Path("loss.png"))
        PosixPath('loss.png')
    """
    figure = new_figure(8.0, 1.0 + 2.6 * len(by_split))  # raises the install hint first
    from matplotlib.ticker import MaxNLocator

    axes = figure.subplots(len(by_split), 1, squeeze=False)[:, 0]
    unit = next(iter(by_split.values()))[-1].unit
    figure.suptitle(axis_label(name, unit), fontweight="bold")
    for index, (ax, (split, records)) in enumerate(zip(axes, by_split.items())):
        ordered = sorted(records, key=lambda r: (r.step, r.wall_time))
        if split == "test":  # one evaluation: its result is a value, not a trend
            ordered = ordered[-1:]
            final = ordered[0]
            ax.axhline(final.value * display_scale(final.unit), color=f"C{index}", lw=1.0)
            ax.annotate(
                f"final {format_value(final.value, final.unit)}",
                (final.step, final.value * display_scale(final.unit)),
                textcoords="offset points",
                xytext=(6, 6),
            )
        scale = display_scale(ordered[-1].unit)
        xs = [r.step for r in ordered]
        ys = [r.value * scale for r in ordered]
        marker = "o" if len(xs) <= _MARKER_LIMIT else None  # (a lone test value: a dot)
        ax.plot(xs, ys, marker=marker, ms=3.5, lw=1.4, color=f"C{index}")
        ax.set_title(split, loc="left", fontsize=10, fontweight="bold", color=f"C{index}")
        ax.set_xlabel("step")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel(axis_label(name, ordered[-1].unit))
        ax.grid(alpha=0.3)
        starts = _epoch_starts([(r.epoch, float(r.step)) for r in ordered])
        _mark_epochs(ax, starts)
    return save_png(figure, path)


def plot_system(records: Sequence[MetricRecord], path: Path) -> Path:
    """The system samples: a panel per quantity (the same quantity of every GPU shares a
    panel), x = seconds since the first sample, epochs marked as in `plot_metric`.

    Args:
        records: Records of the system split.
        path: Where to write the PNG.

    Returns:
        `path`.

    Example:
        >>> system_records = [MetricRecord("system", 1, i, "cpu_usage", 0.2 + 0.1 * i, float(i), "%")
        ...                   for i in range(4)]
        >>> plot_system(system_records, Path("system.png"))
        PosixPath('system.png')
    """
    panels: dict[str, dict[str, list[MetricRecord]]] = {}
    for record in sorted(records, key=lambda r: (r.wall_time, r.step)):
        panel = re.sub(r"^gpu\d+_", "gpu_", record.name)
        panels.setdefault(panel, {}).setdefault(record.name, []).append(record)
    start = min(r.wall_time for r in records)
    columns = 1 if len(panels) == 1 else 2
    rows = math.ceil(len(panels) / columns)
    figure = new_figure(5.0 * columns, 0.6 + 2.5 * rows)
    figure.suptitle("system", fontweight="bold")
    grid = figure.subplots(rows, columns, squeeze=False).ravel()
    starts = _epoch_starts([(r.epoch, r.wall_time - start) for r in records])
    for ax, (panel, series) in zip(grid, sorted(panels.items())):
        unit = next(iter(series.values()))[-1].unit
        for name, points in sorted(series.items()):
            scale = display_scale(points[-1].unit)
            xs = [r.wall_time - start for r in points]
            ys = [r.value * scale for r in points]
            ax.plot(xs, ys, lw=1.3, label=name, marker="o" if len(xs) <= _MARKER_LIMIT else None)
        ax.set_ylabel(axis_label(panel, unit))
        ax.set_xlabel("seconds")
        ax.grid(alpha=0.3)
        if len(series) > 1:
            ax.legend(fontsize=8)
        _mark_epochs(ax, starts)
    for ax in grid[len(panels) :]:
        ax.set_visible(False)
    return save_png(figure, path)


def _epoch_starts(points: Sequence[tuple[int, float]]) -> list[tuple[int, float]]:
    """(epoch, first x of that epoch), by epoch."""
    first: dict[int, float] = {}
    for epoch, x in points:
        first[epoch] = min(x, first.get(epoch, x))
    return sorted(first.items())


def _mark_epochs(ax: Axes, starts: Sequence[tuple[int, float]]) -> None:
    """Dotted lines where epochs start and a top axis naming them."""
    if not starts:
        return
    for _, x in starts[1:]:
        ax.axvline(x, color="0.55", ls=":", lw=0.9)
    stride = max(1, math.ceil(len(starts) / _EPOCH_LABELS))
    shown = starts[::stride]
    prefix = "epoch " if len(shown) <= 6 else "e"
    top = ax.secondary_xaxis("top")
    top.set_xticks([x for _, x in shown], [f"{prefix}{epoch}" for epoch, _ in shown])
    top.tick_params(labelsize=8, colors="0.35")
