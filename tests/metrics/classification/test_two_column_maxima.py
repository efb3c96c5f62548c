"""Two class scores per row, in a batch large enough for the elementwise row maximum (issue 16:
`maximum` and `gt` instead of a `max` reduction over a last dimension of size 2): the same
confusion matrix, class counts and accuracy as scikit-learn on numpy's argmax (the first
maximum, so ties go to class 0), the same non-finite row counts, and the same numbers as the
`max` path that compiled graphs and small batches take."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.metrics import accuracy_score, confusion_matrix, multilabel_confusion_matrix

from torchtally.functional.classification._inputs import row_maxima
from torchtally.metrics import (
    AccuracyMetric,
    ConfusionMatrixMetric,
    F1ScoreMetric,
    MetricValueError,
)

N = 4096  # above the pair path's 2048 rows


def _tied_scores(seed: int, n: int = N) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(-1, 3, (n,), generator=g)  # some outside [0, 2)
    # small integers: a third of the rows tie
    scores = torch.randint(0, 3, (n, 2), generator=g).float()
    scores[::97, 0] = float("inf")
    scores[::89, 1] = float("-inf")
    return labels, scores


def test_row_maxima_of_two_columns_is_torch_max_on_finite_and_infinite_rows() -> None:
    _, scores = _tied_scores(0)
    values, indices = row_maxima(scores)
    expected = scores.max(dim=-1)
    assert indices.dtype == torch.bool  # the pair path ran
    torch.testing.assert_close(values, expected.values, rtol=0, atol=0)
    assert torch.equal(indices.long(), expected.indices)
    _, small_indices = row_maxima(scores[:64])
    assert small_indices.dtype == torch.int64  # below the switch: max itself
    assert torch.equal(small_indices, expected.indices[:64])


@pytest.mark.parametrize("check_values", [True, False])
def test_two_columns_match_sklearn_on_valid_rows(check_values: bool) -> None:
    matrix = ConfusionMatrixMetric(2, check_values=check_values).coalesce_updates(False)
    f1 = F1ScoreMetric(2, average_type="macro", check_values=check_values)
    f1.coalesce_updates(False)
    ys, ps = [], []
    for seed in range(3):
        labels, scores = _tied_scores(seed)
        matrix.update(labels, scores)
        f1.update(labels, scores)
        keep = ((labels >= 0) & (labels < 2)).numpy()
        ys.append(labels.numpy()[keep])
        ps.append(np.argmax(scores.numpy(), axis=-1)[keep])  # numpy: the first maximum
    y, p = np.concatenate(ys), np.concatenate(ps)
    np.testing.assert_array_equal(
        matrix.confusion_matrix.numpy(), confusion_matrix(y, p, labels=[0, 1])
    )
    mcm = multilabel_confusion_matrix(y, p, labels=[0, 1])
    tp, fp, fn = mcm[:, 1, 1], mcm[:, 0, 1], mcm[:, 1, 0]
    np.testing.assert_array_equal(f1.class_counts.numpy(), np.stack([tp, tp + fp, tp + fn]))


def test_two_column_accuracy_matches_sklearn() -> None:
    g = torch.Generator().manual_seed(3)
    labels = torch.randint(0, 2, (N,), generator=g)
    scores = torch.randint(0, 3, (N, 2), generator=g).float()
    metric = AccuracyMetric().coalesce_updates(False)
    metric.update(labels, scores)
    expected = accuracy_score(labels.numpy(), np.argmax(scores.numpy(), axis=-1))
    assert float(metric.compute()) == pytest.approx(expected, rel=0, abs=0)


def test_two_column_nonfinite_rows_are_counted_and_refused() -> None:
    g = torch.Generator().manual_seed(4)
    labels = torch.randint(0, 2, (N,), generator=g)
    scores = torch.randn(N, 2, generator=g)
    scores[5, 0] = float("nan")
    scores[6, 1] = float("nan")
    scores[7] = float("-inf")  # both classes masked: the maximum is -inf
    scores[8, 1] = float("inf")
    scores[9, 0] = float("-inf")  # one masked class: legitimate
    for metric in (AccuracyMetric(), ConfusionMatrixMetric(2), F1ScoreMetric(2)):
        metric.coalesce_updates(False).update(labels, scores)
        assert metric._errors.tolist()[2] == 4
        with pytest.raises(MetricValueError, match="non-finite"):
            metric.compute()


def test_pair_path_equals_the_max_path_of_small_batches() -> None:
    # the same rows in one large batch (pair path) and in 64-row batches (max path)
    labels, scores = _tied_scores(5)
    labels = labels.clamp(0, 1)
    scores = torch.where(scores.isfinite(), scores, 1.0)  # no error: compute must answer
    whole = [ConfusionMatrixMetric(2), F1ScoreMetric(2), AccuracyMetric()]
    pieces = [ConfusionMatrixMetric(2), F1ScoreMetric(2), AccuracyMetric()]
    for big, small in zip(whole, pieces, strict=True):
        big.coalesce_updates(False).update(labels, scores)
        small.coalesce_updates(False)
        for start in range(0, N, 64):
            small.update(labels[start : start + 64], scores[start : start + 64])
        torch.testing.assert_close(big.compute(), small.compute(), rtol=0, atol=0)
