"""Line plots of logged values: one figure per metric (a panel per split, x = step) and one
figure of the system samples (x = seconds since the first sample), each with epoch markers."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from torchtally._records import MetricRecord
from torchtally.learn._format import MACHINE_WIDE, format_value, qualified_name
from torchtally.learn._plots.canvas import axis_label, display_scale, new_figure, save_png

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["epoch_starts", "metric_figure", "plot_metric", "plot_system", "system_figure"]

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
    return save_png(metric_figure(name, by_split), path)


def metric_figure(name: str, by_split: Mapping[str, Sequence[MetricRecord]]) -> Figure:
    """The figure `plot_metric` saves.

    Args:
        name: The metric name.
        by_split: Split -> its records of this metric, in display order.

    Returns:
        The figure (a panel per split).

    Example:
        >>> records = [MetricRecord("train", e, 10 * e, "accuracy", 0.5 + e / 10, 0.0, "%")
        ...            for e in (1, 2)]
        >>> float(metric_figure("accuracy", {"train": records}).axes[0].get_xlim()[0])
        0.0
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
        percent = ordered[-1].unit == "%"
        # a 100% line on the top edge is drawn whole, over the frame, not half clipped under it
        on_top = {"clip_on": False, "zorder": 3} if percent else {}
        ax.plot(xs, ys, marker=marker, ms=3.5, lw=1.4, color=f"C{index}", **on_top)
        ax.set_title(split, loc="left", fontsize=10, fontweight="bold", color=f"C{index}")
        ax.set_xlabel("step")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel(axis_label(name, ordered[-1].unit))
        ax.grid(alpha=0.3)
        if percent:
            _percent_limits(ax, ys)
        if split != "test":
            starts = epoch_starts(ordered)
            ax.set_xlim(left=starts[0][1])  # the run from its first epoch's start, not step 5
            _mark_epochs(ax, starts)
    return figure


def epoch_starts(records: Sequence[MetricRecord]) -> list[tuple[int, float]]:
    """Where each epoch of one split starts on a step axis: a split's step counter runs on
    across epochs, so epoch e starts at the last step logged in epoch e - 1 (its end), epoch 1
    at step 0, and an epoch whose predecessor was not logged one step before its first record.

    Args:
        records: One split's records.

    Returns:
        (epoch, starting step), by epoch.

    Example:
        >>> records = [MetricRecord("train", e, s, "loss", 1.0, 0.0)
        ...            for e, s in ((1, 5), (1, 16), (2, 21), (2, 32), (4, 50))]
        >>> epoch_starts(records)
        [(1, 0.0), (2, 16.0), (4, 49.0)]
    """
    ends: dict[int, int] = {}
    firsts: dict[int, int] = {}
    for r in records:
        ends[r.epoch] = max(r.step, ends.get(r.epoch, r.step))
        firsts[r.epoch] = min(r.step, firsts.get(r.epoch, r.step))
    starts = []
    for epoch in sorted(ends):
        fallback = 0 if epoch == 1 else firsts[epoch] - 1
        starts.append((epoch, float(ends.get(epoch - 1, fallback))))
    return starts


def _percent_limits(ax: Axes, values: Sequence[float]) -> None:
    """A percentage's axis within 0-100%: padded by 5% of the values' span (5 points for a
    single value or a flat line) but never past the bounds, unless a value itself is."""
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return
    low, high = min(finite), max(finite)
    pad = (high - low) * 0.05 or 5.0
    ax.set_ylim(min(max(low - pad, 0.0), low), max(min(high + pad, 100.0), high))


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
    return save_png(system_figure(records), path)


def system_figure(records: Sequence[MetricRecord]) -> Figure:
    """The figure `plot_system` saves.

    Args:
        records: Records of the system split.

    Returns:
        The figure (a panel per quantity).

    Example:
        >>> samples = [MetricRecord("system", 1, 0, "cpu_memory_used", 3.0, float(i), "GiB")
        ...            for i in range(3)]
        >>> system_figure(samples).axes[0].get_ylabel()
        'cpu_memory_used (machine, GiB)'
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
    starts = _first_times([(r.epoch, r.wall_time - start) for r in records])
    for ax, (panel, series) in zip(grid, sorted(panels.items())):
        unit = next(iter(series.values()))[-1].unit
        shown: list[float] = []
        for name, points in sorted(series.items()):
            scale = display_scale(points[-1].unit)
            xs = [r.wall_time - start for r in points]
            ys = [r.value * scale for r in points]
            shown += ys
            marker = "o" if len(xs) <= _MARKER_LIMIT else None
            on_top = {"clip_on": False, "zorder": 3} if unit == "%" else {}
            ax.plot(xs, ys, lw=1.3, label=qualified_name(name), marker=marker, **on_top)
        ax.set_ylabel(_panel_label(panel, series, unit))
        if unit == "%":
            _percent_limits(ax, shown)
        ax.set_xlabel("seconds")
        ax.grid(alpha=0.3)
        if len(series) > 1:
            ax.legend(fontsize=8)
        _mark_epochs(ax, starts)
    for ax in grid[len(panels) :]:
        ax.set_visible(False)
    return figure


def _panel_label(panel: str, series: Mapping[str, Sequence[MetricRecord]], unit: str) -> str:
    # one series: its name as logged, marked when it measures the machine, not the process
    name = next(iter(series)) if len(series) == 1 else panel
    if name in MACHINE_WIDE:
        return f"{name} (machine{', ' + unit if unit else ''})"
    return axis_label(name, unit)


def _first_times(points: Sequence[tuple[int, float]]) -> list[tuple[int, float]]:
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
