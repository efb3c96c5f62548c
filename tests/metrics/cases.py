"""The registry that `test_common.py` runs every built-in metric through.

A metric is covered by the common invariants by adding a `Case` to one of the `cases_*.py`
files (one per metric family). Each case gives a factory and a data generator; the common test
derives every check from them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from torchtally.metrics import Metric

Args = tuple[tuple[Any, ...], dict[str, Any]]


@dataclass(frozen=True)
class Case:
    """One metric configuration for the common tests.

    Attributes:
        id: Test id.
        make: Builds a fresh metric.
        batch: `batch(generator, n)` returns `(args, kwargs)` for `update` with `n` samples; tensors
            whose first dimension is `n` are split/concatenated along it by the common tests.
        bad: `(args, kwargs, message_fragment)` triples: updates that must make `compute` raise
            `MetricValueError` whose message contains the fragment.
        exact: Whether accumulating batches must equal one batch exactly (up to float64
            round-off); False for approximate metrics whose state is a sketch.
    """

    id: str
    make: Callable[[], Metric]
    batch: Callable[[torch.Generator, int], Args]
    bad: list[tuple[tuple[Any, ...], dict[str, Any], str]] = field(default_factory=list)
    exact: bool = True


def labels_and_scores(g: torch.Generator, n: int, num_classes: int) -> tuple[Tensor, Tensor]:
    """Random labels and float32 class scores that are right about 60% of the time."""
    labels = torch.randint(0, num_classes, (n,), generator=g)
    scores = torch.randn(n, num_classes, generator=g)
    scores[torch.arange(n), labels] += 1.0
    return labels, scores
