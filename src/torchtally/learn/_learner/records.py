"""From computed metric values (host tensors, in a step closure) to `MetricRecord`s.

A scalar value becomes one record; a 1-D value (per-class precision, say) one record per
element, named `name[i]`; a mapping one record per key (`name/key`); values of higher rank
(a confusion matrix) are not logged as records. Units follow `MetricRecord`: fractions that
display as percentages carry "%".
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import torch

from torchtally._records import MetricRecord
from torchtally.metrics import Metric

__all__ = ["metric_unit", "to_records"]


def metric_unit(metric: Metric) -> str:
    """The display unit of a metric's records.

    Args:
        metric: The metric; its class declares `unit`.

    Returns:
        "%" for fractions shown as percentages (accuracy, precision, AUROC, ...), else "".

    Example:
        >>> from torchtally.metrics import AccuracyMetric
        >>> metric_unit(AccuracyMetric("accuracy"))
        '%'
    """
    unit = metric.unit  # declared on the metric class (an instance may override)
    return unit if isinstance(unit, str) else ""


def to_records(
    split: str,
    epoch: int,
    step: int,
    values: Mapping[str, Any],
    units: Mapping[str, str],
    wall_time: float | None = None,
) -> list[MetricRecord]:
    """Records for one set of metric values.

    Args:
        split: The split the values belong to.
        epoch: The 1-based epoch.
        step: The global (train) or evaluation (valid/test) step.
        values: Metric name -> value (host tensor, number or mapping of them).
        units: Metric name -> unit.
        wall_time: The time stamp (default: now).

    Returns:
        The records, in the order of `values`.

    Example:
        >>> to_records("train", 1, 10, {"loss": torch.tensor(0.5)}, {"loss": ""})[0].value
        0.5
    """
    stamp = time.time() if wall_time is None else wall_time
    records: list[MetricRecord] = []
    for name, value in values.items():
        unit = units.get(name, "")
        for label, number in _flatten(name, value):
            records.append(MetricRecord(split, epoch, step, label, number, stamp, unit))
    return records


def _flatten(name: str, value: Any) -> list[tuple[str, float]]:
    if isinstance(value, Mapping):
        return [pair for key, item in value.items() for pair in _flatten(f"{name}/{key}", item)]
    if isinstance(value, torch.Tensor):
        if value.numel() == 1:
            return [(name, float(value.reshape(())))]
        if value.dim() == 1:
            return [(f"{name}[{i}]", float(v)) for i, v in enumerate(value.tolist())]
        return []
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [(name, float(value))]
    return []
