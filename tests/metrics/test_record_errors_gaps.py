"""Error counts recorded with gaps (kinds skipped with None) land on the right kinds."""

from __future__ import annotations

import pytest
import torch

from torchtally.metrics import AccuracyMetric
from torchtally.metrics._base import ErrorKinds, Metric


def test_accuracy_counts_bad_labels_and_nonfinite_rows_separately() -> None:
    metric = AccuracyMetric()
    kinds = list(metric.error_kinds)
    labels = torch.tensor([0, 5, -1, 2, 1])
    scores = torch.zeros(5, 3)
    scores[1, 0] = float("nan")
    scores[3, 2] = float("inf")
    scores[4, 1] = float("-inf")  # a masked class: legitimate
    for _ in range(3):
        metric.update(labels, scores)
    errors = metric._errors  # by kind (AccuracyMetric keeps its counts in its state)
    # hand count per update: labels 5 and -1 are outside [0, 3); rows 1 and 3 have a NaN/+inf max
    expected = torch.zeros(len(kinds), dtype=torch.int64)
    expected[0] = 3 * 2
    expected[2] = 3 * 2
    assert errors.tolist() == expected.tolist(), (kinds, errors)


class _ThreeKinds(Metric):
    error_kinds = ErrorKinds(a="a", b="b", c="c")

    def __init__(self) -> None:
        super().__init__()
        self.register_state("total", torch.zeros(()))

    def update(self, *counts: torch.Tensor | None) -> None:
        self.record_errors(**dict(zip("abc", counts)))

    def compute(self) -> torch.Tensor:
        return self.total


@pytest.mark.parametrize(
    "counts",
    [
        (torch.tensor(2), None, torch.tensor(5)),
        (torch.tensor(2), torch.tensor(3), torch.tensor(5)),
        (None, torch.tensor(3), None),
        (torch.tensor(4), torch.tensor(0), torch.tensor(1)),
    ],
)
def test_record_errors_adds_each_kind(counts: tuple[torch.Tensor | None, ...]) -> None:
    metric = _ThreeKinds()
    metric.update(*counts)
    metric.update(*counts)
    expected = [0 if c is None else 2 * int(c) for c in counts]
    assert metric._buffers["_errors"].tolist() == expected
