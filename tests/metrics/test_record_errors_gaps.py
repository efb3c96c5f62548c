"""Error counts recorded with gaps (kinds skipped with None) land on the right kinds."""

from __future__ import annotations

import torch

from torchtally.metrics import AccuracyMetric


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
    errors = metric._buffers["_errors"]
    # hand count per update: labels 5 and -1 are outside [0, 3); rows 1 and 3 have a NaN/+inf max
    expected = torch.zeros(len(kinds), dtype=torch.int64)
    expected[0] = 3 * 2
    expected[2] = 3 * 2
    assert errors.tolist() == expected.tolist(), (kinds, errors)
