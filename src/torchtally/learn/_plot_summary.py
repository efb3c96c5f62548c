"""The summary table of a run: min, last and max of every metric per split, and how values are
written for people (percentages ×100)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import final

from torchtally.learn._events import SYSTEM_SPLIT, MetricRecord

__all__ = ["SummaryRow", "format_value", "ordered_splits", "summarize"]

_KNOWN_SPLITS = ("train", "valid", "test")


@final
@dataclass(frozen=True)
class SummaryRow:
    """One metric of one split.

    Attributes:
        split: The split.
        name: The metric name.
        unit: Its unit.
        count: How many values were logged.
        minimum: Smallest finite value (NaN if none is finite).
        last: The latest value (largest step, then wall time).
        maximum: Largest finite value (NaN if none is finite).
    """

    split: str
    name: str
    unit: str
    count: int
    minimum: float
    last: float
    maximum: float


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
    """Min, last and max of every (split, metric).

    Args:
        records: Metric records.

    Returns:
        One row per (split, name), splits in `ordered_splits` order and names sorted.

    Example:
        >>> rows = summarize(records)
        >>> rows[0].name, rows[0].minimum
        ('accuracy', 0.5)
    """
    groups: dict[tuple[str, str], list[MetricRecord]] = {}
    for record in records:
        groups.setdefault((record.split, record.name), []).append(record)
    rank = {split: i for i, split in enumerate(ordered_splits(s for s, _ in groups))}
    rows = []
    for (split, name), group in sorted(groups.items(), key=lambda g: (rank[g[0][0]], g[0][1])):
        finite = [r.value for r in group if math.isfinite(r.value)]
        last = max(group, key=lambda r: (r.step, r.wall_time))
        rows.append(
            SummaryRow(
                split=split,
                name=name,
                unit=group[-1].unit,
                count=len(group),
                minimum=min(finite) if finite else math.nan,
                last=last.value,
                maximum=max(finite) if finite else math.nan,
            )
        )
    return rows


def format_value(value: float, unit: str) -> str:
    """A value as shown to people: percentages (fractions) ×100 with two decimals, anything else
    with four significant digits, followed by the unit.

    Args:
        value: The logged value.
        unit: Its unit.

    Returns:
        The text.

    Example:
        >>> format_value(0.875, "%"), format_value(0.123456, ""), format_value(245.5, "W")
        ('87.50 %', '0.1235', '245.5 W')
    """
    if unit == "%":
        return f"{100.0 * value:.2f} %"
    text = f"{value:.4g}"
    return f"{text} {unit}" if unit else text
