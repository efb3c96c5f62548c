"""Curves and average precision: exact mode against scikit-learn (average_precision_score,
precision_recall_curve, roc_curve), binned mode against TorchMetrics 1.9."""

from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import average_precision_score
from sklearn.metrics import precision_recall_curve as sk_pr_curve
from sklearn.metrics import roc_curve as sk_roc_curve
from torchmetrics.classification import (
    BinaryAveragePrecision,
    BinaryPrecisionRecallCurve,
    BinaryROC,
    MulticlassAveragePrecision,
    MultilabelAveragePrecision,
)

from torchtally._errors import MetricValueError
from torchtally.metrics.curves import AveragePrecisionMetric, PrecisionRecallCurveMetric, ROCMetric
from torchtally.testing import assert_traceable


def _binary_data(
    seed: int, n: int, coarse: bool
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    scores = torch.rand(n, generator=g, dtype=torch.float64)
    if coarse:
        scores = (scores * 5).round() / 5  # ties
    target = torch.randint(0, 2, (n,), generator=g)
    target[0] = 1  # at least one positive
    weights = torch.randint(0, 4, (n,), generator=g).double()
    weights[0] = 1.0
    return scores, target, weights


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 50), coarse=st.booleans())
def test_exact_binary_matches_sklearn(seed: int, n: int, coarse: bool) -> None:
    scores, target, weights = _binary_data(seed, n, coarse)
    half = n // 2
    ap, pr, roc = AveragePrecisionMetric(capacity=64), PrecisionRecallCurveMetric(), ROCMetric()
    for metric in (ap, pr, roc):
        metric.update(scores[:half], target[:half], weights[:half])
        metric.update(scores[half:], target[half:], weights[half:])
    y, s, w = target.numpy(), scores.numpy(), weights.numpy()
    assert float(ap.compute()) == pytest.approx(average_precision_score(y, s, sample_weight=w))
    for ours, theirs in zip(pr.compute(), sk_pr_curve(y, s, sample_weight=w)):
        np.testing.assert_allclose(ours.numpy(), theirs, atol=1e-12)
    if (w * (1 - y)).sum() > 0:  # sklearn's fpr is NaN without negatives, as ours
        theirs_roc = sk_roc_curve(y, s, sample_weight=w, drop_intermediate=False)
        for ours, theirs in zip(roc.compute(), theirs_roc):
            np.testing.assert_allclose(ours.numpy(), theirs, atol=1e-12)


@settings(max_examples=20, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(8, 60),
    average=st.sampled_from(["macro", "micro", "weighted", "none"]),
    task=st.sampled_from(["multiclass", "multilabel"]),
)
def test_exact_multiclass_and_multilabel_ap_match_sklearn(
    seed: int, n: int, average: str, task: str
) -> None:
    g = torch.Generator().manual_seed(seed)
    classes = 4
    scores = torch.rand(n, classes, generator=g, dtype=torch.float64)
    if task == "multiclass":
        target = torch.cat(
            [torch.arange(classes), torch.randint(0, classes, (n - classes,), generator=g)]
        )
        indicator = torch.nn.functional.one_hot(target, classes)
    else:
        target = torch.randint(0, 2, (n, classes), generator=g)
        target[:classes] = torch.eye(classes, dtype=torch.long)  # every label has a positive
        indicator = target
    metric = AveragePrecisionMetric(task, classes, capacity=64, average=average)
    metric.update(scores, target)
    expected = average_precision_score(
        indicator.numpy(), scores.numpy(), average=None if average == "none" else average
    )
    np.testing.assert_allclose(metric.compute().numpy(), expected, atol=1e-12)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 50), thresholds=st.integers(2, 12))
def test_binned_binary_matches_torchmetrics(seed: int, n: int, thresholds: int) -> None:
    scores, target, _ = _binary_data(seed, n, coarse=False)
    scores = scores.float()
    kwargs = {"thresholds": thresholds}
    ap, pr, roc = (
        AveragePrecisionMetric(**kwargs),
        PrecisionRecallCurveMetric(**kwargs),
        ROCMetric(**kwargs),
    )
    theirs = [
        BinaryAveragePrecision(**kwargs),
        BinaryPrecisionRecallCurve(**kwargs),
        BinaryROC(**kwargs),
    ]
    for metric in (ap, pr, roc, *theirs):
        metric.update(scores, target)
    assert float(ap.compute()) == pytest.approx(float(theirs[0].compute()), abs=1e-6)
    for ours_metric, their_metric in ((pr, theirs[1]), (roc, theirs[2])):
        for ours, expected in zip(ours_metric.compute(), their_metric.compute()):
            torch.testing.assert_close(
                ours.float(), expected.float(), equal_nan=True, atol=1e-6, rtol=0
            )


@pytest.mark.parametrize("average", ["macro", "micro", "weighted", "none"])
def test_binned_multiclass_and_multilabel_ap_match_torchmetrics(average: str) -> None:
    g = torch.Generator().manual_seed(7)
    probabilities = torch.softmax(torch.randn(50, 3, generator=g), 1)
    labels = torch.randint(0, 3, (50,), generator=g)
    ours = AveragePrecisionMetric("multiclass", 3, thresholds=11, average=average)
    if average == "micro":  # TorchMetrics' multiclass AP has no micro; its multilabel does
        theirs = MultilabelAveragePrecision(3, thresholds=11, average="micro")
        theirs.update(probabilities, torch.nn.functional.one_hot(labels, 3))
    else:
        average_arg = None if average == "none" else average
        theirs = MulticlassAveragePrecision(3, thresholds=11, average=average_arg)
        theirs.update(probabilities, labels)
    ours.update(probabilities, labels)
    torch.testing.assert_close(ours.compute().float(), theirs.compute().float(), atol=1e-6, rtol=0)


def test_ties_are_one_threshold_by_hand() -> None:
    # Scores 0.9 (+), 0.5 (+), 0.5 (-), 0.1 (-): thresholds 0.9 (P=1, R=1/2), 0.5 (P=2/3, R=1).
    scores, target = torch.tensor([0.9, 0.5, 0.5, 0.1]), torch.tensor([1, 1, 0, 0])
    assert float(AveragePrecisionMetric()(scores, target)) == pytest.approx(0.5 * 1 + 0.5 * 2 / 3)


def test_exact_overflow_and_argument_errors() -> None:
    metric = AveragePrecisionMetric(capacity=4)
    metric.update(torch.rand(6), torch.ones(6, dtype=torch.long))
    with pytest.raises(MetricValueError, match="2 samples were dropped"):
        metric.compute()
    with pytest.raises(ValueError, match="exclude each other"):
        AveragePrecisionMetric(thresholds=10, capacity=10)
    with pytest.raises(ValueError, match="`num_classes` must be None for task='binary'"):
        ROCMetric("binary", 3)
    with pytest.raises(ValueError, match=r"`num_classes` must be an integer >= 2"):
        ROCMetric("multiclass")
    with pytest.raises(ValueError, match="`average` must be one of 'none', 'micro'"):
        ROCMetric("multiclass", 3, average="macro")
    with pytest.raises(ValueError, match="strictly increasing"):
        ROCMetric(thresholds=[0.5, 0.2])


@pytest.mark.parametrize("thresholds", [None, 16])
def test_average_precision_is_traceable_in_both_modes(thresholds: int | None) -> None:
    metric = AveragePrecisionMetric(
        "multilabel", 3, thresholds=thresholds, capacity=None if thresholds else 128
    )
    g = torch.Generator().manual_seed(0)
    report = assert_traceable(
        metric, torch.rand(8, 3, generator=g), torch.randint(0, 2, (8, 3), generator=g)
    )
    assert report.graphs == 1


def test_docstring_examples() -> None:
    for name in ("torchtally.functional.curves._curves", "torchtally.metrics.curves._curves"):
        result = doctest.testmod(importlib.import_module(name), extraglobs={"torch": torch})
        assert result.attempted > 0 and result.failed == 0
