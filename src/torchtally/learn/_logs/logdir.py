"""Reading a learner's log directory back: metric records and final-evaluation curves.

Layout (written by the learner's file loggers): `LOGDIR/<split>/epoch-<n>.csv` (columns split,
epoch, step, name, value, wall_time, unit) or `.jsonl` (one JSON object per line with the same
keys), system samples under `LOGDIR/system/`, and `LOGDIR/<split>/curves.json`
(`dataclasses.asdict(CurveData)`).
"""

from __future__ import annotations

import csv
import json
import logging
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, final

from torchtally._records import CurveData, MetricRecord

__all__ = ["LogData", "read_logdir", "record_from_row"]

logger = logging.getLogger("torchtally.learn.plots")

_LOG_FILE = re.compile(r"^epoch-(\d+)\.(csv|jsonl)$")
# Columns that must hold a value; "value" may be null (NaN) and "unit" may be absent.
_REQUIRED = ("split", "epoch", "step", "name", "wall_time")


@final
@dataclass
class LogData:
    """What a log directory holds.

    Attributes:
        records: Every metric record, in file order within each split.
        curves: Split -> the curves its final evaluation left.
        files: The log files read.
    """

    records: list[MetricRecord] = field(default_factory=list)
    curves: dict[str, CurveData] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)


def read_logdir(logdir: str | Path) -> LogData:
    """Read every log file and curves file under `logdir`.

    Lines that cannot be parsed (e.g. the half-written last line of a killed run) are skipped
    with one warning per file.

    Args:
        logdir: The learner's log directory.

    Returns:
        The records and curves found.

    Raises:
        FileNotFoundError: `logdir` is not a directory.
        ValueError: It holds no log files and no curves.

    Example:
        >>> from torchtally.learn import FileLogger
        >>> FileLogger("runs/mnist").on_records([
        ...     MetricRecord("train", 1, 5, "loss", 0.7, 0.0),
        ...     MetricRecord("valid", 1, 2, "loss", 0.6, 0.0),
        ...     MetricRecord("system", 1, 0, "cpu_usage", 0.3, 0.0, "%"),
        ... ])
        >>> data = read_logdir("runs/mnist")
        >>> sorted({r.split for r in data.records})
        ['system', 'train', 'valid']
    """
    root = Path(logdir)
    if not root.is_dir():
        raise FileNotFoundError(
            f"Argument `logdir` must be an existing directory of learner logs. "
            f"Received: logdir={str(logdir)!r}, which is not a directory"
        )
    data = LogData()
    for split_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        logs = [(int(m[1]), p) for p in split_dir.iterdir() if (m := _LOG_FILE.match(p.name))]
        for _, path in sorted(logs):
            data.files.append(path)
            data.records.extend(_read_log(path))
        curves_path = split_dir / "curves.json"
        if curves_path.is_file():
            data.files.append(curves_path)
            data.curves[split_dir.name] = _read_curves(curves_path)
    if not data.files:
        raise ValueError(
            "Argument `logdir` must hold learner logs (<split>/epoch-<n>.csv or .jsonl, or "
            f"<split>/curves.json). Received: logdir={str(logdir)!r}, which has none"
        )
    return data


def _read_log(path: Path) -> list[MetricRecord]:
    records, bad = [], 0
    for row in _rows(path):
        try:
            records.append(record_from_row(row))
        except (KeyError, TypeError, ValueError):
            bad += 1
    if bad:
        logger.warning("skipped %d unreadable line%s of %s", bad, "s" * (bad != 1), path)
    return records


def _rows(path: Path) -> Iterator[Any]:
    with path.open(encoding="utf-8", newline="") as file:
        if path.suffix == ".csv":
            yield from csv.DictReader(file)
            return
        for line in file:
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                yield None  # counted as unreadable


def record_from_row(row: object) -> MetricRecord:
    """A `MetricRecord` from one parsed csv/jsonl row: the one reading of a logged value
    (a null or empty value is NaN, as it was written)."""
    if not isinstance(row, Mapping):
        raise ValueError(f"not a record: {row!r}")
    if any(row.get(c) is None for c in _REQUIRED) or "value" not in row:
        raise ValueError(f"incomplete row: {row!r}")
    value = row["value"]
    return MetricRecord(
        split=str(row["split"]),
        epoch=int(row["epoch"]),
        step=int(row["step"]),
        name=str(row["name"]),
        value=math.nan if value is None or value == "" else float(value),  # JSON null = NaN
        wall_time=float(row["wall_time"]),
        unit=str(row.get("unit") or ""),
    )


def _read_curves(path: Path) -> CurveData:
    raw = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(raw, dict):
        raise ValueError(
            f"{path} must hold a JSON object (CurveData); it holds {type(raw).__name__}"
        )
    return CurveData(
        confusion_matrix=raw.get("confusion_matrix"),
        class_names=list(raw.get("class_names") or []),
        roc=dict(raw.get("roc") or {}),
        pr=dict(raw.get("pr") or {}),
        reliability=dict(raw.get("reliability") or {}),
        metric_pr=dict(raw.get("metric_pr") or {}),
        metric_roc=dict(raw.get("metric_roc") or {}),
        at_k=dict(raw.get("at_k") or {}),
    )
