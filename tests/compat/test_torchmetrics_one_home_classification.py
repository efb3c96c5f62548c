"""The parameters the native classification functions took so that the TorchMetrics drop-in
is an adapter over them (issue 28, "one home"): each checked against TorchMetrics 1.9 or a
hand computation, and the native defaults against their old behaviour."""

from __future__ import annotations

import math

import pytest
import torch
import torchmetrics as tm

from torchtally.compat import torchmetrics as ttm
from torchtally.functional.classification._averaging import (
    safe_divide,
    seen_classes,
    weighted_class_mean,
)
from torchtally.functional.classification._confusion_matrix import (
    add_confusion,
    confusion_matrix_compute,
)
from torchtally.functional.classification._inputs import positive_scores, score_probabilities


def test_safe_divide_takes_torchmetrics_zero_division() -> None:
    num, den = torch.tensor([1, 0, 3]), torch.tensor([4, 0, 0])
    assert safe_divide(num, den).tolist() == [0.25, 0.0, 0.0]
    assert safe_divide(num, den, 1.0).tolist() == [0.25, 1.0, 1.0]
    nan = safe_divide(num, den, math.nan)
    assert nan[0] == 0.25 and nan[1:].isnan().all()
    assert safe_divide(num, den).dtype == torch.float32  # counts divide in the default dtype


def test_a_nan_score_reads_as_a_logit_batch_only_when_asked() -> None:
    scores = torch.tensor([0.2, 0.7, math.nan])
    # native default: a NaN decides nothing (the metrics count it as an error)
    assert positive_scores(scores, 0.5).tolist() == [False, True, False]
    # TorchMetrics: "not every score in [0, 1]" holds, so the batch goes through a sigmoid
    assert positive_scores(scores, 0.5, nan_outside=True).tolist() == [True, True, False]
    expected = torch.tensor([0.2, 0.7]).sigmoid()
    torch.testing.assert_close(score_probabilities(scores, nan_outside=True)[:2], expected)
    target = torch.tensor([0, 1, 0])
    theirs = tm.functional.classification.binary_stat_scores(scores, target)
    ours = ttm.functional.classification.binary_stat_scores(scores, target)
    assert ours.tolist() == theirs.tolist()


def test_stacked_confusion_matrices_normalize_each() -> None:
    stack = torch.tensor([[[1, 3], [0, 0]], [[2, 2], [1, 3]]])
    for normalize in ("true", "pred", "all"):
        each = torch.stack([confusion_matrix_compute(m, normalize) for m in stack])
        torch.testing.assert_close(confusion_matrix_compute(stack, normalize), each)
    assert confusion_matrix_compute(stack, "true")[0].tolist() == [[0.25, 0.75], [0.0, 0.0]]


def test_add_confusion_fills_the_matrix_of_each_offset() -> None:
    labels, predicted = torch.tensor([[0, 1], [1, 1]]), torch.tensor([[1, 1], [0, 1]])
    out = torch.zeros(2, 2, 2, dtype=torch.int64)
    offset = torch.tensor([[0], [4]])  # row r goes to matrix r
    add_confusion(labels, predicted, torch.ones_like(labels), 2, out, offset)
    assert out.tolist() == [[[0, 1], [0, 1]], [[0, 0], [1, 1]]]


def test_weighted_class_mean_per_sample_and_when_nothing_counts() -> None:
    scores = torch.tensor([[0.5, 1.0, 0.0], [0.2, 0.4, 0.6]])
    weights = torch.tensor([[1.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    assert weighted_class_mean(scores, weights).tolist() == [0.75, 0.0]
    assert math.isnan(weighted_class_mean(scores, weights, math.nan)[1])
    predicted, actual = torch.tensor([0, 2, 0]), torch.tensor([1, 0, 0])
    assert seen_classes(predicted, actual).tolist() == [True, True, False]
    assert seen_classes(predicted, actual, labels_only=True).tolist() == [True, False, False]


@pytest.mark.parametrize("average", ["micro", "macro", "weighted", "none"])
def test_jaccard_of_no_class_is_nan_as_in_torchmetrics(average: str) -> None:
    preds, target = torch.tensor([0, 1]), torch.tensor([-1, -1])
    args = {"num_classes": 3, "average": average, "ignore_index": -1}
    ours = ttm.functional.classification.multiclass_jaccard_index(preds, target, **args)
    theirs = tm.functional.classification.multiclass_jaccard_index(preds, target, **args)
    torch.testing.assert_close(ours, theirs, equal_nan=True)
