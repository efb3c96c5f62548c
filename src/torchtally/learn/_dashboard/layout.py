"""Where the dashboard's pieces go, decided afresh from the terminal size on every refresh.

From the top: the status line, the progress bars, then the plots (a grid of one panel per
metric) with the metrics panel to their right (below them on narrow terminals), and at the
bottom the last lines printed by user code, when there are any. Too small a terminal keeps the
status and the bars and asks for more room instead of drawing garbage.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from torchtally.learn._dashboard.state import RunSnapshot
from torchtally.learn._dashboard.widgets import (
    PlotBox,
    metrics_panel,
    output_panel,
    progress_table,
    status_line,
)

if TYPE_CHECKING:
    from rich.console import RenderableType

__all__ = ["build_screen"]

MIN_WIDTH = 40
MIN_HEIGHT = 12
_SIDE_BY_SIDE_WIDTH = 90  # narrower: the metrics panel goes under the plots
_PLOT_MIN_WIDTH = 38
_PLOT_MIN_HEIGHT = 8
_OUTPUT_LINES = 4


def build_screen(
    snapshot: RunSnapshot,
    output: list[str],
    note: str,
    keys_active: bool,
    width: int,
    height: int,
) -> RenderableType:
    """The whole screen for one refresh.

    Args:
        snapshot: The run's state, with histories.
        output: Recent lines printed by user code (the last few are shown).
        note: A highlighted message for the status line, or "".
        keys_active: Whether `q` stops the run.
        width: Terminal columns.
        height: Terminal rows.

    Returns:
        A rich renderable filling `width`×`height`.

    Example:
        >>> Live(get_renderable=lambda: build_screen(snap, [], "", True, 120, 40))  # doctest: +SKIP
    """
    from rich.console import Group
    from rich.layout import Layout
    from rich.text import Text

    bars = len(snapshot.splits) + (1 if snapshot.info is not None else 0)
    head = [status_line(snapshot, note, keys_active), progress_table(snapshot)]
    if width < MIN_WIDTH or height < MIN_HEIGHT:
        hint = Text(f"plots need ≥{MIN_WIDTH}×{MIN_HEIGHT} (now {width}×{height})", style="dim")
        return Group(*head, hint)
    recent = output[-_OUTPUT_LINES:]
    out_height = len(recent) + 2 if recent else 0
    main_height = height - 1 - max(bars, 1) - out_height
    root = Layout()
    parts = [Layout(head[0], size=1), Layout(head[1], size=max(bars, 1))]
    main = Layout()
    parts.append(main)
    if recent:
        parts.append(Layout(output_panel(recent), size=out_height))
    root.split_column(*parts)

    metrics = metrics_panel(snapshot)
    metrics_rows = _metrics_height(snapshot)
    if width >= _SIDE_BY_SIDE_WIDTH:
        side = min(max(32, width // 3), 56)
        main.split_row(_plots(snapshot, width - side, main_height), Layout(metrics, size=side))
    else:
        below = min(metrics_rows, max(main_height // 2, 3))
        main.split_column(_plots(snapshot, width, main_height - below), Layout(metrics, size=below))
    return root


def _plots(snapshot: RunSnapshot, width: int, height: int) -> RenderableType:
    """A grid of plot panels fitting `width`×`height`, as many as fit."""
    from rich.layout import Layout
    from rich.panel import Panel
    from rich.text import Text

    boxes = [PlotBox(name, series) for name, series in snapshot.history.items() if series]
    if not boxes:
        return Panel(
            "[dim]plots appear with the first values[/]", title="plots", title_align="left"
        )
    columns = max(1, min(len(boxes), width // _PLOT_MIN_WIDTH))
    rows_fit = max(1, height // _PLOT_MIN_HEIGHT)
    rows = min(math.ceil(len(boxes) / columns), rows_fit)
    shown = boxes[: rows * columns]
    hidden = len(boxes) - len(shown)
    panels = []
    for index, box in enumerate(shown):
        subtitle = box.legend()
        if hidden and index == len(shown) - 1:
            subtitle.append(f" +{hidden} more: enlarge the terminal ", style="dim")
        panels.append(
            Panel(
                box,
                title=box.title(),
                title_align="left",
                subtitle=subtitle,
                subtitle_align="right",
                padding=(0, 1),
            )
        )
    grid = Layout()
    row_layouts = []
    for r in range(rows):
        row = Layout()
        cells = panels[r * columns : (r + 1) * columns]
        # Blank cells keep the column widths (an empty Text would show rich's placeholder).
        filler = [Layout(Text(" ")) for _ in range(columns - len(cells))]
        row.split_row(*(Layout(cell) for cell in cells), *filler)
        row_layouts.append(row)
    grid.split_column(*row_layouts)
    return grid


def _metrics_height(snapshot: RunSnapshot) -> int:
    rows = 1 + max(len(snapshot.latest), 1)
    if snapshot.system:
        rows += 2 + len(snapshot.system)
    return rows + 2  # the panel's border
