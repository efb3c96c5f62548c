"""The dashboard's pieces as rich renderables: status line, progress bars, metrics table, plots
and the panel of captured user output. `layout` arranges them on the screen.

rich is an optional dependency: it is imported inside the functions, never at module import.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, final

from torchtally.learn._dashboard.state import RunSnapshot, Series
from torchtally.learn._dashboard.terminal_plot import PlotSeries, render_plot
from torchtally.learn._format import (
    display_value,
    format_duration,
    format_rate,
    format_value,
    pretty_name,
)

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderableType, RenderResult

__all__ = [
    "PlotBox",
    "epoch_range",
    "metrics_panel",
    "output_panel",
    "progress_table",
    "split_color",
    "status_line",
]

_FIXED_COLORS = {"train": "cyan", "valid": "magenta", "test": "yellow"}
_PALETTE = ("green", "blue", "red", "bright_cyan", "bright_magenta", "bright_yellow")


def split_color(split: str) -> str:
    """The colour of a split in plots, legends and progress bars.

    Args:
        split: The split name.

    Returns:
        A rich colour name: train cyan, valid magenta, test yellow, others from a palette.

    Example:
        >>> split_color("valid")
        'magenta'
    """
    if split in _FIXED_COLORS:
        return _FIXED_COLORS[split]
    return _PALETTE[sum(split.encode()) % len(_PALETTE)]


def status_line(snapshot: RunSnapshot, note: str, keys_active: bool) -> RenderableType:
    """The top line: where the run is, elapsed time, and the keys.

    Args:
        snapshot: The run's state.
        note: An extra message shown highlighted (e.g. "stopping after this step"), or "".
        keys_active: Whether `q` stops the run (stdin is a terminal).

    Returns:
        A one-line rich `Table` spanning the width.

    Example:
        >>> status_line(state.snapshot(), "", True)  # doctest: +SKIP
    """
    from rich.table import Table
    from rich.text import Text

    left = Text(" torchtally ", style="bold reverse")
    p = snapshot.current
    if p is None:
        splits = ", ".join(snapshot.info.splits) if snapshot.info else ""
        left.append(f" starting {splits} …", style="bold")
    else:
        steps = f"{p.step}/{p.steps_in_epoch}" if p.steps_in_epoch else str(p.step)
        left.append(f" {p.split} ", style=f"bold {split_color(p.split)}")
        left.append(
            f"│ epoch {p.epoch}/{p.num_epochs} │ step {steps} │ global step {p.global_step}"
        )
    left.append(f" │ {format_duration(snapshot.elapsed)} elapsed")
    if note:
        left.append(f"  {note}", style="bold yellow")
    right = Text("q: stop  ^C: interrupt " if keys_active else "^C: interrupt ", style="dim")
    grid = Table.grid(expand=True)
    grid.add_column(ratio=1, no_wrap=True, overflow="ellipsis")
    grid.add_column(justify="right", no_wrap=True)
    grid.add_row(left, right)
    return grid


def progress_table(snapshot: RunSnapshot) -> RenderableType:
    """A bar for the whole run and one per split, with counts, rate and ETA.

    Args:
        snapshot: The run's state.

    Returns:
        A rich `Table` with one row per bar.

    Example:
        >>> progress_table(state.snapshot())  # doctest: +SKIP
    """
    from rich.progress_bar import ProgressBar
    from rich.table import Table

    grid = Table.grid(expand=True, padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(ratio=1)
    grid.add_column(no_wrap=True, justify="right")
    grid.add_column(no_wrap=True, justify="right")
    grid.add_column(no_wrap=True, justify="right")
    info = snapshot.info
    if info is not None:
        done, total = _run_fraction(snapshot)
        eta = format_duration(snapshot.run_eta)
        grid.add_row(
            " run",
            ProgressBar(total=total, completed=done, complete_style="green"),
            f"epoch {snapshot.current.epoch if snapshot.current else info.start_epoch}"
            f"/{info.num_epochs}",
            "",
            f"ETA {'>' if snapshot.run_eta_partial and snapshot.run_eta else ''}{eta}",
        )
    for view in snapshot.splits:
        p = view.progress
        color = split_color(view.split)
        steps = p.steps_in_epoch
        grid.add_row(
            f"[{color}] {view.split}[/]",
            ProgressBar(total=steps, completed=p.step, complete_style=color, pulse=steps is None),
            f"{p.step}/{steps}" if steps else str(p.step),
            format_rate(p.samples_per_second, view.steps_per_second),
            f"ETA {format_duration(view.epoch_eta)}",
        )
    return grid


def metrics_panel(snapshot: RunSnapshot, expand: bool = True) -> RenderableType:
    """Latest value of every metric per split, then the machine metrics.

    Args:
        snapshot: The run's state.
        expand: Fill the width given (False: as narrow as the values allow).

    Returns:
        A rich `Panel` titled "metrics".

    Example:
        >>> metrics_panel(state.snapshot())  # doctest: +SKIP
    """
    from rich.panel import Panel
    from rich.table import Table

    splits = [v.split for v in snapshot.splits]
    for by_split in snapshot.latest.values():
        splits += [s for s in by_split if s not in splits]
    table = Table.grid(padding=(0, 1), expand=expand)
    table.add_column(no_wrap=True, overflow="ellipsis", ratio=1 if expand else None)
    for _ in splits or [""]:
        table.add_column(no_wrap=True, justify="right")
    blank = [""] * max(len(splits) - 1, 0)
    if splits:
        table.add_row("", *(f"[{split_color(s)}]{s}[/]" for s in splits))
    for name, by_split in snapshot.latest.items():
        cells = [by_split.get(s) for s in splits]
        values = [format_value(r.value, r.unit) if r else "–" for r in cells]
        table.add_row(f"[bold]{name}[/]", *values)
    if not snapshot.latest and not snapshot.system:
        table.add_row("[dim]waiting for the first values[/]")
    if snapshot.system:  # machine metrics: the value in the last column
        if snapshot.latest:
            table.add_row("")
        table.add_row("[dim]system[/]")
        for record in snapshot.system:
            value = format_value(record.value, record.unit)
            table.add_row(pretty_name(record.name), *blank, value)
    return Panel(table, title="metrics", title_align="left", border_style="blue", expand=expand)


def output_panel(lines: list[str]) -> RenderableType:
    """The last lines your code printed while the dashboard was up (colours kept).

    Args:
        lines: The lines, oldest first.

    Returns:
        A rich `Panel` titled "output".

    Example:
        >>> output_panel(["hello from user code"])  # doctest: +SKIP
    """
    from rich.panel import Panel
    from rich.text import Text

    body = Text("\n").join(Text.from_ansi(line, no_wrap=True, end="") for line in lines)
    body.no_wrap = True
    body.overflow = "ellipsis"
    return Panel(body, title="output", title_align="left", border_style="dim")


@final
class PlotBox:
    """A metric's history, one coloured line per split, drawn to fit whatever box rich gives
    it (the plot is re-rendered at the current size on every refresh).

    Args:
        name: The metric name (the panel title).
        series: Its history per split.

    Example:
        >>> Panel(PlotBox("loss", snapshot.history["loss"]))  # doctest: +SKIP
    """

    def __init__(self, name: str, series: tuple[Series, ...]) -> None:
        self.name = name
        self.series = series

    def title(self) -> str:
        """The panel title: the name, with "(%)" for percentages."""
        unit = self.series[0].unit if self.series else ""
        return f"{self.name} ({unit})" if unit else self.name

    def legend(self) -> Any:
        """A rich `Text` naming each split in its colour."""
        from rich.text import Text

        legend = Text()
        for s in self.series:
            legend.append(" ━ ", style=split_color(s.split))
            legend.append(f"{s.split} ")
        return legend

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.segment import Segment
        from rich.style import Style

        width = options.max_width
        height = options.height or 8
        if width < 12 or height < 2:
            yield Segment(self.name[:width])
            return
        lines = [
            PlotSeries(s.split, s.xs, [display_value(y, s.unit) for y in s.ys]) for s in self.series
        ]
        unit = self.series[0].unit if self.series else ""
        bounds = (0.0, 100.0) if unit == "%" else None  # a fraction, displayed ×100
        rows = render_plot(
            lines, width, height, x_label="epoch", x_range=epoch_range(self.series), y_bounds=bounds
        )
        styles = [Style(color=split_color(s.split)) for s in self.series]
        axis = Style(dim=True)
        for number, row in enumerate(rows):
            for text, owner in row:
                yield Segment(text, axis if owner is None else styles[owner])
            if number < len(rows) - 1:
                yield Segment.line()


def epoch_range(series: tuple[Series, ...]) -> tuple[float, float] | None:
    """The x range of a plot in epochs: from the start of the first epoch with a value to
    the end of the last one, so the axis reads in whole epochs (0 to 3, not 0.5263 to 2.4).

    Args:
        series: The plotted histories (x in epochs).

    Returns:
        (low, high), whole numbers with low < high; None without a finite x.

    Example:
        >>> epoch_range((Series("train", "", (0.5263, 1.0, 2.4), (3.0, 2.0, 1.0)),))
        (0, 3)
        >>> epoch_range((Series("valid", "%", (1.0,), (0.9691,)),))  # epoch 1's end value
        (0, 1)
    """
    xs = [x for s in series for x in s.xs if math.isfinite(x)]
    if not xs:
        return None
    # x = e is the end of epoch e, so the first epoch with a value starts at ceil(x) - 1
    low = max(math.ceil(min(xs)) - 1, 0)
    high = max(math.ceil(max(xs)), low + 1)
    return low, high


def _run_fraction(snapshot: RunSnapshot) -> tuple[float, float]:
    info = snapshot.info
    assert info is not None
    total = float(max(info.num_epochs - info.start_epoch + 1, 1))
    first = next((v for v in snapshot.splits if info.splits and v.split == info.splits[0]), None)
    if first is None:
        return 0.0, total
    p = first.progress
    within = min(p.step / p.steps_in_epoch, 1.0) if p.steps_in_epoch else 0.0
    return min(p.epoch - info.start_epoch + within, total), total
