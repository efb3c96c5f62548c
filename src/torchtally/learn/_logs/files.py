"""`FileLogger`: every logged value as a row of a per-split, per-epoch CSV or JSON Lines file.

Records go to `logdir/<split>/epoch-<n>.csv` (or `.jsonl`), machine samples to
`logdir/system/...`, one row per value with the columns of `MetricRecord` (split, epoch, step,
name, value, wall_time, unit). Files are appended to. A `fit` that resumes first drops the rows
its checkpoint does not cover (logged after it, before the run was stopped or killed: they are
logged again) and a last line cut mid-write (with a warning), so the files read as one
uninterrupted run; a fresh run in a used logdir appends
(give each run its own logdir). `read_records` parses them back.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import threading
import warnings
from pathlib import Path
from typing import Any, final

from torchtally._errors import check_choice
from torchtally._records import MetricRecord, Observer, Progress, RunInfo
from torchtally.learn._logs.logdir import record_from_row

__all__ = ["COLUMNS", "FORMATS", "FileLogger", "read_records"]

#: The file formats `FileLogger` writes.
FORMATS = ("csv", "jsonl")
#: The columns of every row, in order.
COLUMNS = ("split", "epoch", "step", "name", "value", "wall_time", "unit")


@final
class FileLogger(Observer):
    """An observer that appends every record to `logdir/<split>/epoch-<n>.<format>`.

    Thread-safe: machine samples may arrive from the sampler's thread. Non-finite values are
    written as "nan"/"inf" in CSV and as null in JSON Lines (strict JSON).

    Args:
        logdir: The run's log directory (created on first write).
        format: "csv" or "jsonl".

    Example:
        >>> import torch
        >>> from torchtally.learn import Learner
        >>> from torchtally.optim import SGD
        >>> model = torch.nn.Linear(2, 2)
        >>> learner = Learner(model, SGD(model.parameters(), lr=0.1),
        ...                   observers=[FileLogger("runs/a")])
        >>> _ = learner.fit([(torch.tensor([[1.0, 0.0]]), torch.tensor([0]))])
        >>> sorted(path.as_posix() for path in Path("runs/a").rglob("*.csv"))
        ['runs/a/train/epoch-1.csv']
        >>> read_records("runs/a", split="train")[-1].name
        'learning_rate'
    """

    def __init__(self, logdir: str | os.PathLike[str], format: str = "csv") -> None:
        check_choice("format", format, FORMATS)
        self.logdir = Path(logdir)
        self.format = format
        self._lock = threading.Lock()
        self._checked: set[Path] = set()  # files whose end this logger has checked or written

    def path(self, split: str, epoch: int) -> Path:
        """The file holding the records of `split` in `epoch`.

        Args:
            split: The split.
            epoch: The epoch.

        Returns:
            `logdir/<split>/epoch-<epoch>.<format>`.
        """
        return self.logdir / split / f"epoch-{epoch}.{self.format}"

    def on_run_start(self, info: RunInfo) -> None:
        """Create the log directory; on a resume, drop the rows the checkpoint does not cover."""
        self.logdir.mkdir(parents=True, exist_ok=True)
        if info.resumed_steps is not None:
            with self._lock:
                for split, step in info.resumed_steps.items():
                    self._truncate(split, step)

    def _truncate(self, split: str, last_step: int) -> None:
        """Rewrite `split`'s files without the rows whose step is past `last_step`."""
        folder = self.logdir / split
        if not folder.is_dir():
            return
        for path in folder.glob(f"epoch-*.{self.format}"):
            records, cut = _read_file_and_tail(path)
            kept = [r for r in records if r.step <= last_step]
            if len(kept) == len(records) and not cut:
                continue
            if not kept:
                path.unlink()
                continue
            temp = path.with_name(f".{path.name}.tmp")
            temp.unlink(missing_ok=True)
            self._append(temp, kept)
            os.replace(temp, path)
            self._checked.discard(temp)

    def on_progress(self, progress: Progress) -> None:
        """Progress is not logged."""

    def on_records(self, records: list[MetricRecord]) -> None:
        """Append the records, each to its split's and epoch's file."""
        groups: dict[tuple[str, int], list[MetricRecord]] = {}
        for record in records:
            groups.setdefault((record.split, record.epoch), []).append(record)
        with self._lock:
            for (split, epoch), group in groups.items():
                self._append(self.path(split, epoch), group)

    def on_epoch_end(self, split: str, epoch: int) -> None:
        """Nothing to do: every write is complete when `on_records` returns."""

    def on_run_end(self, stopped_early: bool) -> None:
        """Nothing to do: files are closed after each write."""

    def _append(self, path: Path, records: list[MetricRecord]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path not in self._checked:
            _drop_cut_tail(path)  # else the first new row would be glued onto it
            self._checked.add(path)
        new = not path.exists() or path.stat().st_size == 0
        with open(path, "a", newline="", encoding="utf-8") as handle:
            if self.format == "csv":
                writer = csv.writer(handle)
                if new:
                    writer.writerow(COLUMNS)
                writer.writerows(_row(record) for record in records)
            else:
                for record in records:
                    row = dict(zip(COLUMNS, _row(record)))
                    if not math.isfinite(record.value):
                        row["value"] = None
                    handle.write(json.dumps(row) + "\n")


def _drop_cut_tail(path: Path) -> None:
    """Cut a last line left without its newline (a run killed while appending) off the file,
    with a warning naming the file and the line."""
    if not path.is_file():
        return
    with open(path, "rb+") as handle:
        size = handle.seek(0, os.SEEK_END)
        if size == 0:
            return
        handle.seek(size - 1)
        if handle.read(1) == b"\n":
            return
        handle.seek(0)
        data = handle.read()
        keep = data.rfind(b"\n") + 1
        line = data.count(b"\n") + 1
        warnings.warn(
            f"{path}: line {line} was cut mid-write (a run stopped while logging it) and is "
            f"dropped before appending: {data[keep : keep + 60]!r}",
            UserWarning,
            stacklevel=4,
        )
        handle.truncate(keep)


def _row(record: MetricRecord) -> tuple[Any, ...]:
    return (
        record.split,
        record.epoch,
        record.step,
        record.name,
        record.value,
        record.wall_time,
        record.unit,
    )


def read_records(logdir: str | os.PathLike[str], split: str | None = None) -> list[MetricRecord]:
    """Parse the files a `FileLogger` wrote back into records.

    A last line cut mid-write (a run killed while logging) is dropped with a warning naming the
    file and the line; any other line that is not a record raises a ValueError naming them.

    Args:
        logdir: The log directory.
        split: Only this split's records (default: every split found).

    Returns:
        The records, by split name, then epoch, then file order.

    Example:
        >>> logger = FileLogger("runs/b")
        >>> logger.on_records([MetricRecord("valid", epoch, 10 * epoch, "accuracy", value, 0.0, "%")
        ...                    for epoch, value in ((1, 0.81), (2, 0.86), (3, 0.9))])
        >>> [r.value for r in read_records("runs/b", "valid") if r.name == "accuracy"]
        [0.81, 0.86, 0.9]
    """
    root = Path(logdir)
    folders = (
        [root / split] if split is not None else sorted(p for p in root.iterdir() if p.is_dir())
    )
    records: list[MetricRecord] = []
    for folder in folders:
        files = [p for p in folder.glob("epoch-*.*") if p.suffix.lstrip(".") in FORMATS]
        for path in sorted(files, key=_epoch_of):
            records.extend(_read_file(path))
    return records


def _epoch_of(path: Path) -> int:
    try:
        return int(path.stem.removeprefix("epoch-"))
    except ValueError:
        return -1


def _read_file(path: Path) -> list[MetricRecord]:
    return _read_file_and_tail(path)[0]


def _read_file_and_tail(path: Path) -> tuple[list[MetricRecord], bool]:
    """The records of a log file, and whether its last line was cut mid-write.

    Every row is written whole with its newline, so a last line without one is what a run
    killed while appending leaves: it is dropped, with a warning naming the file and the line
    (its start may even parse as a record with a wrong value). Any other line that is not a
    record is damage: a ValueError naming the file and the line.
    """
    with open(path, newline="", encoding="utf-8") as handle:
        text = handle.read()
    complete = text[: text.rfind("\n") + 1]
    cut = text[len(complete) :]
    if cut:
        warnings.warn(
            f"{path}: line {complete.count(chr(10)) + 1} was cut mid-write (the run stopped "
            f"while logging it) and is dropped: {cut[:60]!r}",
            UserWarning,
            stacklevel=3,
        )
    rows = _csv_rows(path, complete) if path.suffix == ".csv" else _jsonl_rows(path, complete)
    records = []
    for line, row in rows:
        try:
            records.append(record_from_row(row))
        except (KeyError, TypeError, ValueError) as err:
            raise ValueError(f"{path}, line {line}: not a log record ({err}): {row!r}") from err
    return records, bool(cut)


def _csv_rows(path: Path, text: str) -> list[tuple[int, dict[str, Any]]]:
    reader = csv.reader(io.StringIO(text, newline=""))
    rows: list[tuple[int, dict[str, Any]]] = []
    for fields in reader:
        if reader.line_num == 1:
            if tuple(fields) != COLUMNS:
                raise ValueError(
                    f"{path}, line 1: the header must be {','.join(COLUMNS)}, found {fields!r}"
                )
            continue
        if len(fields) != len(COLUMNS):
            raise ValueError(
                f"{path}, line {reader.line_num}: a row has {len(COLUMNS)} fields, found "
                f"{len(fields)}: {fields!r}"
            )
        rows.append((reader.line_num, dict(zip(COLUMNS, fields))))
    return rows


def _jsonl_rows(path: Path, text: str) -> list[tuple[int, Any]]:
    rows: list[tuple[int, Any]] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            rows.append((number, json.loads(line)))
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}, line {number}: not JSON ({err}): {line[:80]!r}") from err
    return rows
