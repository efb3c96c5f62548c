"""Large class-score batches share one max pass between the update and the value check
(issue 16): the counts stay scikit-learn's and the error counts stay the hand counts."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.metrics import confusion_matrix, multilabel_confusion_matrix

from torchtally.metrics import ConfusionMatrixMetric, F1ScoreMetric, MetricValueError

N, C = 5000, 10  # 50,000 scores: past the shared-max threshold


def _batch(seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(-1, C + 1, (N,), generator=g)  # some outside [0, C)
    scores = torch.randn(N, C, generator=g)
    scores[::7, 3] = float("-inf")  # masked classes: legitimate
    weights = torch.rand(N, generator=g, dtype=torch.float64)
    return labels, scores, weights


@pytest.mark.parametrize("weighted", [False, True])
def test_large_batches_match_sklearn(weighted: bool) -> None:
    matrix, f1 = ConfusionMatrixMetric(C), F1ScoreMetric(C, average_type="none")
    ys, ps, ws = [], [], []
    for seed in (0, 1):
        labels, scores, weights = _batch(seed)
        w = weights if weighted else None
        matrix.update(labels, scores, w)
        f1.update(labels, scores, w)
        keep = ((labels >= 0) & (labels < C)).numpy()
        ys.append(labels.numpy()[keep])
        ps.append(scores.numpy().argmax(-1)[keep])
        ws.append(weights.numpy()[keep] if weighted else np.ones(keep.sum()))
    y, p, w = np.concatenate(ys), np.concatenate(ps), np.concatenate(ws)
    expected = confusion_matrix(y, p, labels=list(range(C)), sample_weight=w)
    # invalid labels are counted (and raised), the matrix holds the valid ones
    with pytest.raises(MetricValueError, match="labels outside"):
        matrix.compute()
    np.testing.assert_allclose(matrix.confusion_matrix.numpy(), expected, rtol=1e-12)
    mcm = multilabel_confusion_matrix(y, p, labels=list(range(C)), sample_weight=w)
    tp, fp, fn = mcm[:, 1, 1], mcm[:, 0, 1], mcm[:, 1, 0]
    np.testing.assert_allclose(
        f1.class_counts.numpy(), np.stack([tp, tp + fp, tp + fn]), rtol=1e-12, atol=1e-9
    )


def test_large_batch_error_counts_are_the_hand_counts() -> None:
    labels, scores, _ = _batch(2)
    scores[5, 2] = float("nan")
    scores[9, :] = float("-inf")  # every class masked: the row's maximum is -inf
    scores[11, 4] = float("inf")
    metric = ConfusionMatrixMetric(C)
    metric.update(labels, scores)
    errors = metric._errors.tolist()
    rows_bad = sum(not np.isfinite(row.max()) or np.isnan(row).any() for row in scores.numpy())
    assert errors[0] == int(((labels < 0) | (labels >= C)).sum())
    assert errors[1] == 0
    assert errors[2] == rows_bad == 3


@pytest.mark.slow
def test_shared_max_path_is_traceable() -> None:
    from torchtally.testing import assert_traceable

    labels, scores, _ = _batch(3)
    assert_traceable(ConfusionMatrixMetric(C), labels.clamp(0, C - 1), scores)
    assert_traceable(F1ScoreMetric(C, average_type="macro"), labels.clamp(0, C - 1), scores)
