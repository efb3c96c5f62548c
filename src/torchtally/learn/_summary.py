"""`SummaryTable`: at the end of a run, the min, last and max of every metric of every split."""

from __future__ import annotations

import io
import math
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TextIO, final

from torchtally.learn._events import MetricRecord, Progress, RunInfo

__all__ = ["SummaryRow", "SummaryTable"]


@final
@dataclass(frozen=True)
class SummaryRow:
    """One line of the summary.

    Attributes:
        split: The split.
        name: The metric.
        min: The smallest finite value logged (NaN if none was finite).
        last: The last value logged.
        max: The largest finite value logged (NaN if none was finite).
        unit: The display unit.
        count: How many values were logged.
    """

    split: str
    name: str
    min: float
    last: float
    max: float
    unit: str
    count: int


@final
class SummaryTable:
    """An observer that prints a min / last / max table of every metric when a run ends.

    It keeps the records of the current run (machine samples included; each run start clears
    them) and, at `on_run_end`, renders them with rich when it is installed (plain text
    otherwise), prints the table and keeps the text in `text`.

    Args:
        file: Where to print (default: standard output).
        print_table: Print at the end of the run (else only render into `text`).
        use_rich: Force rich on or off (default: rich when importable).

    Example:
        >>> table = SummaryTable()
        >>> Learner(model, optimizer, observers=[table]).fit(train_loader)  # prints the table
        >>> table.rows()[0].split
        'train'
    """

    def __init__(
        self, file: TextIO | None = None, *, print_table: bool = True, use_rich: bool | None = None
    ) -> None:
        self._file = file
        self.print_table = print_table
        self.use_rich = _rich_available() if use_rich is None else use_rich
        self._lock = threading.Lock()
        self._stats: dict[tuple[str, str], SummaryRow] = {}
        self.text = ""

    def on_run_start(self, info: RunInfo) -> None:
        """Forget the previous run's values."""
        with self._lock:
            self._stats.clear()

    def on_progress(self, progress: Progress) -> None:
        """Progress is not summarised."""

    def on_records(self, records: list[MetricRecord]) -> None:
        """Fold the records into the per-metric min / last / max."""
        with self._lock:
            for record in records:
                key = (record.split, record.name)
                self._stats[key] = _fold(self._stats.get(key), record)

    def on_epoch_end(self, split: str, epoch: int) -> None:
        """Nothing to do before the run ends."""

    def on_run_end(self, stopped_early: bool) -> None:
        """Render the table, keep it in `text` and print it."""
        self.text = self.render()
        if self.print_table and self.text:
            print(self.text, file=self._file if self._file is not None else sys.stdout)

    def rows(self) -> list[SummaryRow]:
        """The summary so far, by split then metric name.

        Returns:
            One `SummaryRow` per (split, metric).
        """
        with self._lock:
            return [row for _, row in sorted(self._stats.items())]

    def render(self) -> str:
        """The table as text ("" when nothing was logged).

        Returns:
            A rich-rendered or plain-text table.
        """
        rows = self.rows()
        if not rows:
            return ""
        cells = [
            (r.split, r.name, _show(r.min, r.unit), _show(r.last, r.unit), _show(r.max, r.unit))
            for r in rows
        ]
        return _rich_table(cells) if self.use_rich else _plain_table(cells)


_HEADER = ("split", "metric", "min", "last", "max")


def _fold(row: SummaryRow | None, record: MetricRecord) -> SummaryRow:
    value = record.value
    finite = value if math.isfinite(value) else math.nan
    if row is None:
        return SummaryRow(record.split, record.name, finite, value, finite, record.unit, 1)
    low, high = row.min, row.max
    if math.isfinite(value):
        low = value if math.isnan(low) else min(low, value)
        high = value if math.isnan(high) else max(high, value)
    return SummaryRow(row.split, row.name, low, value, high, row.unit, row.count + 1)


def _show(value: float, unit: str) -> str:
    if math.isnan(value):
        return "-"
    if unit == "%":
        return f"{100.0 * value:.2f}%"
    return f"{value:.4g}{(' ' + unit) if unit else ''}"


def _plain_table(cells: Sequence[Sequence[str]]) -> str:
    widths = [max(len(row[i]) for row in [_HEADER, *cells]) for i in range(len(_HEADER))]
    lines = [
        "  ".join(
            text.ljust(width) if i < 2 else text.rjust(width)
            for i, (text, width) in enumerate(zip(row, widths))
        ).rstrip()
        for row in [_HEADER, *cells]
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _rich_table(cells: Sequence[Sequence[str]]) -> str:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Run summary")
    for index, title in enumerate(_HEADER):
        table.add_column(title, justify="left" if index < 2 else "right")
    for row in cells:
        table.add_row(*row)
    buffer = io.StringIO()
    Console(file=buffer, width=100, color_system=None).print(table)
    return buffer.getvalue().rstrip("\n")


def _rich_available() -> bool:
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return True
