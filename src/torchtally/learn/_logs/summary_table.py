"""`SummaryTable`: at the end of a run, the min, last and max of every metric of every split,
over epoch values only (`learn._summarize.summarize`, shared with the report and the plots)."""

from __future__ import annotations

import io
import logging
import sys
import threading
from collections.abc import Sequence
from typing import TextIO, final

from torchtally._records import MetricRecord, Observer, Progress, RunInfo
from torchtally.learn._history import logged_before
from torchtally.learn._summarize import SummaryRow, epoch_cell, format_cell, summarize

__all__ = ["SummaryRow", "SummaryTable"]

_log = logging.getLogger(__name__)


@final
class SummaryTable(Observer):
    """An observer that prints a min / last / max table of every metric when a run ends.

    It keeps the records of the current run (machine samples included; each run start clears
    them) and, at `on_run_end`, renders them with rich when it is installed (plain text
    otherwise), prints the table and keeps the text in `text`.

    Args:
        file: Where to print (default: standard output).
        print_table: Print at the end of the run (else only render into `text`).
        use_rich: Force rich on or off (default: rich when importable).

    Example:
        >>> table = SummaryTable(use_rich=False)
        >>> table.on_run_start(RunInfo(("train",), 2, {"train": ("loss",)}))
        >>> table.on_records([MetricRecord("train", 1, 5, "loss", 0.7, 0.0),
        ...                   MetricRecord("train", 2, 10, "loss", 0.4, 0.0)])
        >>> table.on_run_end(stopped_early=False)
        split  metric    min  epoch   last    max  epoch
        -----  ------  -----  -----  -----  -----  -----
        train  loss    0.400      2  0.400  0.700      1
        >>> table.rows()[0].split, table.rows()[0].min
        ('train', 0.4)
    """

    def __init__(
        self, file: TextIO | None = None, *, print_table: bool = True, use_rich: bool | None = None
    ) -> None:
        self._file = file
        self.print_table = print_table
        self.use_rich = _rich_available() if use_rich is None else use_rich
        self._lock = threading.Lock()
        self._records: list[MetricRecord] = []
        self.text = ""

    def on_run_start(self, info: RunInfo) -> None:
        """Forget the previous run's values; a resumed run starts from what it logged before
        its checkpoint (read back from its logdir), so the table covers the whole run."""
        earlier = logged_before(info)
        with self._lock:
            self._records[:] = earlier

    def on_progress(self, progress: Progress) -> None:
        """Progress is not summarised."""

    def on_records(self, records: list[MetricRecord]) -> None:
        """Keep the records (reduced to epoch values when summarised)."""
        with self._lock:
            self._records.extend(records)

    def on_epoch_end(self, split: str, epoch: int) -> None:
        """Nothing to do before the run ends."""

    def on_run_end(self, stopped_early: bool) -> None:
        """Render the table, keep it in `text` and print it."""
        self.text = self.render()
        if self.print_table and self.text:
            try:
                print(self.text, file=self._file if self._file is not None else sys.stdout)
            except (OSError, ValueError) as error:  # a closed pipe must not fail the run
                _log.warning("torchtally: could not print the summary table: %r", error)

    def rows(self) -> list[SummaryRow]:
        """The summary so far, by split then metric name.

        Returns:
            One `SummaryRow` per (split, metric).
        """
        with self._lock:
            rows = summarize(self._records)
        return rows

    def render(self) -> str:
        """The table as text ("" when nothing was logged).

        Returns:
            A rich-rendered or plain-text table.
        """
        rows = self.rows()
        if not rows:
            return ""
        cells = [
            (
                r.split,
                r.name,
                format_cell(r.min, r.unit),
                epoch_cell(r, r.min_epoch),
                format_cell(r.last, r.unit),
                format_cell(r.max, r.unit),
                epoch_cell(r, r.max_epoch),
            )
            for r in rows
        ]
        return _rich_table(cells) if self.use_rich else _plain_table(cells)


# As Burn's learner summary: each extreme with the epoch it was reached in.
_HEADER = ("split", "metric", "min", "epoch", "last", "max", "epoch")


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
