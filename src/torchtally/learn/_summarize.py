"""The summary of a run: min, last and max of every metric's epoch values per split. One model
(`summarize`) and one value formatter (`format_value`, from the dashboard) serve the summary
table, the HTML report and the plots alike."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import final

from torchtally._records import SYSTEM_SPLIT, MetricRecord, StatisticKey
from torchtally.learn._format import format_value

__all__ = [
    "SummaryRow",
    "epoch_cell",
    "epoch_values",
    "format_cell",
    "format_value",
    "ordered_splits",
    "summarize",
]

_KNOWN_SPLITS = ("train", "valid", "test")


@final
@dataclass(frozen=True)
class SummaryRow:
    """One metric of one split, over its epoch values (the value at each epoch's end; running
    values inside an epoch are for live display only). Machine metrics count every sample.

    Attributes:
        split: The split.
        name: The metric.
        min: The smallest finite epoch value (NaN if none was finite).
        last: The last epoch value.
        max: The largest finite epoch value (NaN if none was finite).
        unit: The display unit.
        count: How many epoch values (samples, for machine metrics) there were.
        min_epoch: The epoch of the minimum (as Burn's summary shows; 0 if none).
        max_epoch: The epoch of the maximum (0 if none).
    """

    split: str
    name: str
    min: float
    last: float
    max: float
    unit: str
    count: int
    min_epoch: int = 0
    max_epoch: int = 0


def epoch_values(records: Iterable[MetricRecord]) -> list[MetricRecord]:
    """The value of each (split, epoch, metric) at its epoch's end: its latest record.

    Machine samples (`SYSTEM_SPLIT`) are all kept. For a run stopped part-way through an epoch
    its latest value stands for that epoch.

    Args:
        records: Metric records (running values included).

    Returns:
        One record per (split, epoch, name), in the order of their first record.

    Example:
        >>> records = [MetricRecord("train", 1, 5, "loss", 0.6, 0.0),
        ...            MetricRecord("train", 1, 10, "loss", 0.5, 0.0),  # epoch 1 ends here
        ...            MetricRecord("train", 2, 15, "loss", 0.41, 0.0)]
        >>> [r.value for r in epoch_values(records) if r.name == "loss"]
        [0.5, 0.41]
    """
    latest: dict[tuple[str, int, str], MetricRecord] = {}
    samples: list[MetricRecord] = []
    for record in records:
        if record.split == SYSTEM_SPLIT:
            samples.append(record)
            continue
        key = (record.split, record.epoch, record.name)
        kept = latest.get(key)
        if kept is None or (record.step, record.wall_time) >= (kept.step, kept.wall_time):
            latest[key] = record
    return [*latest.values(), *samples]


def epoch_cell(row: SummaryRow, epoch: int) -> str:
    """The epoch of a row's min or max, "–" for machine metrics or no value.

    Args:
        row: The row.
        epoch: `row.min_epoch` or `row.max_epoch`.

    Returns:
        The text.

    Example:
        >>> row = summarize([MetricRecord("train", 3, 30, "loss", 0.2, 0.0),
        ...                  MetricRecord("train", 4, 40, "loss", 0.3, 0.0)])[0]
        >>> epoch_cell(row, row.min_epoch)
        '3'
    """
    return "–" if row.split == SYSTEM_SPLIT or epoch <= 0 else str(epoch)


def format_cell(value: float, unit: str) -> str:
    """A summary cell: `format_value`, or "–" for no value (NaN).

    Args:
        value: The value.
        unit: Its unit.

    Returns:
        The text.

    Example:
        >>> format_cell(0.875, "%"), format_cell(math.nan, "")
        ('87.50%', '–')
    """
    return "–" if math.isnan(value) else format_value(value, unit)


def ordered_splits(splits: Iterable[str]) -> list[str]:
    """Splits in display order: train, valid, test, any others alphabetically, system last.

    Args:
        splits: Split names (duplicates allowed).

    Returns:
        The distinct names, ordered.

    Example:
        >>> ordered_splits(["system", "valid", "train", "extra"])
        ['train', 'valid', 'extra', 'system']
    """
    unique = set(splits)
    others = sorted(unique - {*_KNOWN_SPLITS, SYSTEM_SPLIT})
    tail = [SYSTEM_SPLIT] if SYSTEM_SPLIT in unique else []
    return [s for s in _KNOWN_SPLITS if s in unique] + others + tail


def summarize(records: Sequence[MetricRecord]) -> list[SummaryRow]:
    """Min, last and max of the epoch values of every (split, metric): the one summary model
    of the summary table, the report and the plots.

    Args:
        records: Metric records (running values are reduced to `epoch_values` first).

    Returns:
        One row per (split, name), splits in `ordered_splits` order and names sorted.

    Example:
        >>> rows = summarize([MetricRecord("train", 1, 5, "accuracy", 0.5, 0.0, "%"),
        ...                   MetricRecord("train", 2, 10, "accuracy", 0.75, 0.0, "%")])
        >>> rows[0].name, rows[0].min, rows[0].last
        ('accuracy', 0.5, 0.75)
    """
    groups: dict[StatisticKey, list[MetricRecord]] = {}
    for record in epoch_values(records):
        groups.setdefault(record.key, []).append(record)
    rank = {split: i for i, split in enumerate(ordered_splits(s for s, _ in groups))}
    rows = []
    for (split, name), group in sorted(groups.items(), key=lambda g: (rank[g[0][0]], g[0][1])):
        finite = [r.value for r in group if math.isfinite(r.value)]
        finite_records = [r for r in group if math.isfinite(r.value)]
        low = min(finite_records, key=lambda r: r.value, default=None)
        high = max(finite_records, key=lambda r: r.value, default=None)
        last = max(group, key=lambda r: (r.epoch, r.step, r.wall_time))
        rows.append(
            SummaryRow(
                split=split,
                name=name,
                min=min(finite) if finite else math.nan,
                last=last.value,
                max=max(finite) if finite else math.nan,
                unit=group[-1].unit,
                count=len(group),
                min_epoch=low.epoch if low is not None else 0,
                max_epoch=high.epoch if high is not None else 0,
            )
        )
    return rows
