"""The lean path for (N,) int64 labels with (N, C) class scores (issue 16) gives what
scikit-learn gives on the valid rows, and the hand counts of bad labels and non-finite rows,
at small batches (the shared-max path only starts at 2^15 scores)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.metrics import confusion_matrix, multilabel_confusion_matrix

from torchtally.metrics import ConfusionMatrixMetric, F1ScoreMetric, MetricValueError

C = 5


def _batch(seed: int, n: int = 64) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(-1, C + 1, (n,), generator=g)  # some outside [0, C)
    scores = torch.randn(n, C, generator=g)
    return labels, scores


@pytest.mark.parametrize("check_values", [True, False])
def test_lean_path_matches_sklearn_on_valid_rows(check_values: bool) -> None:
    matrix = ConfusionMatrixMetric(C, check_values=check_values)
    f1 = F1ScoreMetric(C, average_type="macro", check_values=check_values)
    ys, ps = [], []
    for seed in range(3):
        labels, scores = _batch(seed)
        matrix.update(labels, scores)
        f1.update(labels, scores)
        keep = ((labels >= 0) & (labels < C)).numpy()
        ys.append(labels.numpy()[keep])
        ps.append(scores.argmax(-1).numpy()[keep])
    y, p = np.concatenate(ys), np.concatenate(ps)
    expected = confusion_matrix(y, p, labels=list(range(C)))
    np.testing.assert_array_equal(matrix.confusion_matrix.numpy(), expected)
    mcm = multilabel_confusion_matrix(y, p, labels=list(range(C)))
    tp, fp, fn = mcm[:, 1, 1], mcm[:, 0, 1], mcm[:, 1, 0]
    np.testing.assert_array_equal(f1.class_counts.numpy(), np.stack([tp, tp + fp, tp + fn]))
    if check_values:
        with pytest.raises(MetricValueError, match="labels outside"):
            matrix.compute()


def test_lean_path_error_counts_are_the_hand_counts() -> None:
    labels, scores = _batch(7)
    scores[5, 2] = float("nan")
    scores[9, :] = float("-inf")  # every class masked: the row's maximum is -inf
    scores[11, 4] = float("inf")
    scores[12, 1] = float("-inf")  # one masked class: legitimate
    for metric in (ConfusionMatrixMetric(C), F1ScoreMetric(C, average_type="macro")):
        metric.update(labels, scores)
        errors = metric._errors.tolist()
        assert errors[0] == int(((labels < 0) | (labels >= C)).sum()) > 0
        assert errors[1] == 0
        assert errors[2] == 3
        assert errors[3:] == [0, 0]


@pytest.mark.parametrize("num_classes", [None, C])
def test_accuracy_lean_path_matches_sklearn_and_hand_counts(num_classes: int | None) -> None:
    from sklearn.metrics import accuracy_score

    from torchtally.metrics import AccuracyMetric

    labels, scores = _batch(11)
    scores[3, 1] = float("nan")
    scores[4, :] = float("-inf")
    metric = AccuracyMetric(num_classes=num_classes)
    unchecked = AccuracyMetric(num_classes=num_classes, check_values=False)
    for m in (metric, unchecked):
        m.update(labels, scores)
    # scikit-learn over every row: an out-of-range label matches no argmax
    expected = accuracy_score(labels.numpy(), scores.argmax(-1).numpy())
    assert float(unchecked.compute()) == pytest.approx(expected, abs=1e-12)
    errors = metric._errors.tolist()
    assert errors == [int(((labels < 0) | (labels >= C)).sum()), 0, 2, 0, 0]
