"""A small braille line plot for terminals: several series on shared axes, sized to any box.

Each character cell holds a 2×4 grid of braille dots, so a `width`×`height` box draws at twice
the horizontal and four times the vertical resolution of plain characters. Consecutive finite
points of a series are joined by straight lines; a NaN or infinite value leaves a gap (the
points on either side are not joined across it). The output is text plus, for every run of
characters, the index of the series that drew it, so a caller can colour each series (rich is
not needed here).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import final

__all__ = ["PlotRow", "PlotSeries", "braille_cells", "data_ranges", "plot_text", "render_plot"]

#: One output row: runs of text, each with the index of the series that drew it (None: axes,
#: labels and blank space).
PlotRow = list[tuple[str, int | None]]

_BRAILLE_BASE = 0x2800
# Dot bit of (column, row) inside a cell: columns 0-1, rows 0-3 from the top.
_DOT_BITS = ((0x01, 0x02, 0x04, 0x40), (0x08, 0x10, 0x20, 0x80))


@final
@dataclass(frozen=True)
class PlotSeries:
    """One line of a plot.

    Attributes:
        label: Name for the legend (e.g. the split, "train").
        xs: X coordinates, same length as `ys`, non-decreasing for a readable line.
        ys: Y values; NaN and infinities are skipped (they leave a gap).
    """

    label: str
    xs: Sequence[float]
    ys: Sequence[float]

    def __post_init__(self) -> None:
        if len(self.xs) != len(self.ys):
            raise ValueError(
                f"PlotSeries({self.label!r}): `xs` and `ys` must have the same length. "
                f"Received: {len(self.xs)} xs and {len(self.ys)} ys"
            )


def data_ranges(
    series: Sequence[PlotSeries], y_bounds: tuple[float, float] | None = None
) -> tuple[tuple[float, float], tuple[float, float]] | None:
    """The x and y ranges covering every finite point, widened where they would be empty.

    Args:
        series: The lines to cover.
        y_bounds: The values a quantity can take (0 to 100 for a percentage), or None: the
            y range never reaches past them.

    Returns:
        ((x_min, x_max), (y_min, y_max)) with x_min < x_max and y_min < y_max, or None when no
        series has a finite point. A constant y is widened by 10% of its magnitude (1 for 0),
        or with `y_bounds` by 5% of their span, so it draws as a level line inside the box.

    Example:
        >>> data_ranges([PlotSeries("train", [0, 1], [2.0, 2.0])])
        ((0, 1), (1.8, 2.2))
        >>> data_ranges([PlotSeries("valid", [1.0], [96.9])], y_bounds=(0.0, 100.0))
        ((1.0, 2.0), (91.9, 100.0))
    """
    finite = math.isfinite
    points = [(x, y) for s in series for x, y in zip(s.xs, s.ys) if finite(x) and finite(y)]
    if not points:
        return None
    xs, ys = zip(*points)
    x_lo, x_hi = min(xs), max(xs)
    y_lo, y_hi = min(ys), max(ys)
    if x_hi == x_lo:
        x_hi = x_lo + 1
    if y_hi == y_lo:
        pad = abs(y_lo) * 0.1 or 1.0
        if y_bounds is not None:
            pad = (y_bounds[1] - y_bounds[0]) * 0.05
        y_lo, y_hi = y_lo - pad, y_hi + pad
    if y_bounds is not None:
        # values outside the bounds (a logging bug) stay visible; padding never crosses them
        y_lo = max(y_lo, min(y_bounds[0], min(ys)))
        y_hi = min(y_hi, max(y_bounds[1], max(ys)))
        if y_hi <= y_lo:
            y_lo, y_hi = y_lo - 1.0, y_hi + 1.0
    return (x_lo, x_hi), (round(y_lo, 12), round(y_hi, 12))


def braille_cells(
    series: Sequence[PlotSeries],
    width: int,
    height: int,
    x_range: tuple[float, float],
    y_range: tuple[float, float],
) -> list[PlotRow]:
    """Draw the series into a `width`×`height` box of braille characters, without axes.

    Args:
        series: The lines, drawn in order (a later series wins a cell both touch).
        width: Box width in characters, >= 1.
        height: Box height in characters, >= 1.
        x_range: (x_min, x_max) mapped to the left and right dot columns; x_min < x_max.
        y_range: (y_min, y_max) mapped to the bottom and top dot rows; y_min < y_max.

    Returns:
        `height` rows, each `width` characters long in total.

    Example:
        >>> rows = braille_cells([PlotSeries("a", [0, 1, 2, 3], [0, 1, 2, 3])], 2, 1, (0, 3), (0, 3))
        >>> "".join(text for text, _ in rows[0])
        '⡠⠊'
    """
    _check_size("width", width, 1)
    _check_size("height", height, 1)
    for name, (lo, hi) in (("x_range", x_range), ("y_range", y_range)):
        if not (_finite(lo) and _finite(hi) and lo < hi):
            raise ValueError(
                f"Argument `{name}` must be finite (low, high) with low < high. "
                f"Received: {name}={(lo, hi)!r}"
            )
    dots_w, dots_h = 2 * width, 4 * height
    bits = [[0] * width for _ in range(height)]
    owner: list[list[int | None]] = [[None] * width for _ in range(height)]

    x0, x_scale = x_range[0], (dots_w - 1) / (x_range[1] - x_range[0])
    y1, y_scale = y_range[1], (dots_h - 1) / (y_range[1] - y_range[0])
    last_col, last_row = dots_w - 1, dots_h - 1
    finite = math.isfinite

    def light(dots: list[tuple[int, int]], index: int) -> None:
        for col, row in dots:
            cell_row, cell_col = row // 4, col // 2
            bits[cell_row][cell_col] |= _DOT_BITS[col % 2][row % 4]
            owner[cell_row][cell_col] = index

    for index, line in enumerate(series):
        previous: tuple[int, int] | None = None
        # Consecutive points in one dot column join into one vertical run (from the lowest to
        # the highest row they reach): drawing that run alone is exact, and keeps a long
        # history as cheap to draw as a short one.
        column: tuple[int, int, int] | None = None  # (col, min row, max row)
        for x, y in zip(line.xs, line.ys):
            if not (finite(x) and finite(y)):
                previous = None  # a gap: do not join across it
                continue
            col, row = round((x - x0) * x_scale), round((y1 - y) * y_scale)
            dot = (min(max(col, 0), last_col), min(max(row, 0), last_row))
            if previous is not None and dot[0] == previous[0] and column is not None:
                column = (column[0], min(column[1], dot[1]), max(column[2], dot[1]))
            else:
                if column is not None:
                    light(_segment((column[0], column[1]), (column[0], column[2])), index)
                light(_segment(previous or dot, dot), index)
                column = (dot[0], dot[1], dot[1])
            previous = dot
        if column is not None:
            light(_segment((column[0], column[1]), (column[0], column[2])), index)
    return [_runs(bits[r], owner[r]) for r in range(height)]


def render_plot(
    series: Sequence[PlotSeries],
    width: int,
    height: int,
    *,
    x_label: str = "",
    x_range: tuple[float, float] | None = None,
    y_bounds: tuple[float, float] | None = None,
) -> list[PlotRow]:
    """A full plot: y labels and ticks on the left, the braille box, x range labels below.

    Args:
        series: The lines (see `PlotSeries`); the axes cover all of them.
        width: Total width in characters, >= 12.
        height: Total height in characters, >= 2 (the last row holds the x labels).
        x_label: Name of the x axis, shown centred under the box when it fits.
        x_range: The x range to draw (low < high), e.g. whole epochs; default: the data's.
        y_bounds: The values the quantity can take (see `data_ranges`).

    Returns:
        Exactly `height` rows, each exactly `width` characters long.

    Example:
        >>> rows = render_plot([PlotSeries("train", [1, 2, 3], [0.9, 0.5, 0.4])], 30, 6)
        >>> len(rows), {sum(len(t) for t, _ in row) for row in rows}
        (6, {30})
    """
    _check_size("width", width, 12)
    _check_size("height", height, 2)
    box_h = height - 1
    ranges = data_ranges(series, y_bounds)
    if ranges is None:
        blank: list[PlotRow] = [[(" " * width, None)] for _ in range(box_h)]
        message = "no data yet"[:width]
        blank[box_h // 2] = [(message.center(width), None)]
        return [*blank, [(" " * width, None)]]
    (x_lo, x_hi), (y_lo, y_hi) = ranges
    if x_range is not None:
        if not (_finite(x_range[0]) and _finite(x_range[1]) and x_range[0] < x_range[1]):
            raise ValueError(
                "Argument `x_range` must be finite (low, high) with low < high. "
                f"Received: x_range={x_range!r}"
            )
        x_lo, x_hi = x_range
    labels = {0: _number(y_hi), box_h - 1: _number(y_lo)}
    if box_h >= 5:
        labels[(box_h - 1) // 2] = _number(y_hi - (y_hi - y_lo) * ((box_h - 1) // 2) / (box_h - 1))
    gutter = max(len(label) for label in labels.values()) + 1
    if width - gutter < 2:
        gutter = 1  # too narrow for labels: ticks only
        labels = {}
    box_w = width - gutter
    cells = braille_cells(series, box_w, box_h, (x_lo, x_hi), (y_lo, y_hi))
    rows: list[PlotRow] = []
    for r, cell_row in enumerate(cells):
        label = labels.get(r)
        prefix = (label.rjust(gutter - 1) + "┤") if label else " " * (gutter - 1) + "│"
        rows.append([(prefix, None), *cell_row])
    rows.append([(_x_axis(_number(x_lo), _number(x_hi), x_label, gutter, width), None)])
    return rows


def plot_text(series: Sequence[PlotSeries], width: int, height: int, *, x_label: str = "") -> str:
    """`render_plot` as plain text, rows joined by newlines.

    Args:
        series: The lines.
        width: Total width in characters, >= 12.
        height: Total height in characters, >= 2.
        x_label: Name of the x axis.

    Returns:
        The plot, `height` lines of `width` characters.

    Example:
        >>> print(plot_text([PlotSeries("loss", [0, 1, 2], [3.0, 2.0, 1.5])], 20, 4))  # doctest: +SKIP
    """
    rows = render_plot(series, width, height, x_label=x_label)
    return "\n".join("".join(text for text, _ in row) for row in rows)


def _x_axis(left: str, right: str, name: str, gutter: int, width: int) -> str:
    room = width - gutter
    line = left + " " * max(room - len(left) - len(right), 1) + right
    if name and room - len(left) - len(right) >= len(name) + 2:
        start = (room - len(name)) // 2
        line = line[:start] + name + line[start + len(name) :]
    return (" " * gutter + line)[:width].ljust(width)


def _segment(start: tuple[int, int], end: tuple[int, int]) -> list[tuple[int, int]]:
    """Bresenham: the dots of the straight line from `start` to `end`, both included."""
    (x0, y0), (x1, y1) = start, end
    dx, dy = abs(x1 - x0), -abs(y1 - y0)
    sx, sy = (1 if x0 < x1 else -1), (1 if y0 < y1 else -1)
    error = dx + dy
    dots = [(x0, y0)]
    while (x0, y0) != (x1, y1):
        doubled = 2 * error
        if doubled >= dy:
            error += dy
            x0 += sx
        if doubled <= dx:
            error += dx
            y0 += sy
        dots.append((x0, y0))
    return dots


def _runs(bits: list[int], owner: list[int | None]) -> PlotRow:
    runs: PlotRow = []
    for value, who in zip(bits, owner):
        char = chr(_BRAILLE_BASE + value) if value else " "
        if runs and runs[-1][1] == who:
            runs[-1] = (runs[-1][0] + char, who)
        else:
            runs.append((char, who))
    return runs


def _number(value: float) -> str:
    text = f"{value:.4g}"
    return "0" if text == "-0" else text


def _finite(value: float) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)


def _check_size(name: str, value: int, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(
            f"Argument `{name}` must be an integer >= {minimum}. Received: {name}={value!r}"
        )
