"""Argument and data errors of the hinge-loss, multilabel-ranking and operating-point adapters
(their values are in the oracle registry, tests/compat/tm_cases.py)."""

from __future__ import annotations

import pytest
import torch

from torchtally._errors import MetricValueError
from torchtally.compat import torchmetrics as ttm
from torchtally.compat.torchmetrics import classification
from torchtally.testing import assert_traceable


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: classification.BinaryHingeLoss(squared=1), r"Argument `squared` must be a bool"),
        (
            lambda: classification.MulticlassHingeLoss(3, multiclass_mode="ovr"),
            r"Argument `multiclass_mode` must be one of",
        ),
        (lambda: classification.MulticlassHingeLoss(1), r"Argument `num_classes` must be"),
        (lambda: ttm.HingeLoss(task="multilabel"), r"HingeLoss has no 'multilabel' variant"),
        (lambda: classification.MultilabelRankingLoss(1), r"Argument `num_labels` must be"),
        (
            lambda: classification.BinaryLogAUC(fpr_range=(0.5, 0.1)),
            r"Argument `fpr_range` must be a tuple of two floats",
        ),
        (
            lambda: classification.MulticlassLogAUC(3, average="weighted"),
            r"Argument `average` must be one of \('macro', 'none', None\)",
        ),
        (
            lambda: classification.BinaryROC(normalization="softmax"),
            r"Argument `normalization` must be one of \('sigmoid', None\) for binary scores",
        ),
        (
            lambda: classification.BinaryRecallAtFixedPrecision(1.5),
            r"Argument `min_precision` must be a float in \[0, 1\]. Received: min_precision=1.5",
        ),
        (
            lambda: ttm.SpecificityAtSensitivity(
                task="multiclass", min_sensitivity="0.5", num_classes=3
            ),
            r"Argument `min_sensitivity` must be a float in \[0, 1\]",
        ),
        (
            lambda: classification.MultilabelCoverageError(3, ignore_index=0.5),
            r"Argument `ignore_index` must be None or an integer",
        ),
    ],
)
def test_bad_arguments_name_the_argument(build: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build()  # type: ignore[operator]


def test_integer_scores_are_refused_naming_the_order() -> None:
    with pytest.raises(ValueError, match=r"update\(preds, target\)"):
        classification.BinaryHingeLoss().update(torch.tensor([0, 1]), torch.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match=r"update\(preds, target\)"):
        classification.MultilabelRankingLoss(3).update(
            torch.randint(0, 2, (4, 3)), torch.rand(4, 3)
        )


def test_bad_targets_are_counted_and_raised_at_compute() -> None:
    metric = classification.MultilabelRankingAveragePrecision(3)
    metric.update(torch.rand(4, 3), torch.tensor([[0, 1, 2]] * 4))
    with pytest.raises(MetricValueError, match="neither 0, 1 nor ignore_index"):
        metric.compute()
    hinge = classification.MulticlassHingeLoss(3)
    hinge.update(torch.rand(2, 3), torch.tensor([0, 3]))
    with pytest.raises(MetricValueError, match="valid label"):
        hinge.compute()


@pytest.mark.parametrize(
    ("metric", "preds", "target"),
    [
        (classification.MultilabelRankingLoss(4), torch.randn(8, 4), torch.randint(0, 2, (8, 4))),
        (
            classification.MulticlassHingeLoss(4, multiclass_mode="one-vs-all"),
            torch.randn(8, 4),
            torch.randint(0, 4, (8,)),
        ),
        (
            classification.BinaryAUROC(max_fpr=0.3, thresholds=20),
            torch.rand(16),
            torch.randint(0, 2, (16,)),
        ),
    ],
    ids=["MultilabelRankingLoss", "MulticlassHingeLoss", "BinaryAUROC(max_fpr)"],
)
def test_updates_trace_without_host_syncs(metric: object, preds, target) -> None:
    report = assert_traceable(metric, preds, target)
    assert report.graphs == 1 and report.recompiles == 0 and not report.unbacked


def test_partial_auc_of_a_curve_ending_before_max_fpr_is_its_whole_area() -> None:
    # TorchMetrics 1.9 raises IndexError here (it reads the ROC point past the last one).
    preds = torch.tensor([0.95, 0.7, 0.6, 0.3, 0.2, 0.35])
    target = torch.tensor([1, 1, 0, 1, 0, 0])
    metric = classification.BinaryAUROC(max_fpr=0.8, thresholds=[0.5, 0.9])
    metric.update(preds, target)
    fpr, tpr, _ = classification.BinaryROC(thresholds=[0.5, 0.9])(preds, target)
    assert float(fpr[-1]) < 0.8
    area = float(torch.trapezoid(tpr.double(), fpr.double()))
    expected = 0.5 * (1 + (area - 0.5 * 0.8**2) / (0.8 - 0.5 * 0.8**2))
    assert float(metric.compute()) == pytest.approx(expected, abs=1e-6)
    with pytest.raises(ValueError, match=r"Argument `max_fpr` must be None or a float in \(0, 1\]"):
        classification.BinaryAUROC(max_fpr=0.0)
