"""The compat binned curves and calibration error are adapters over the native
`torchtally.functional.curves` / `calibration`; against TorchMetrics 1.9 (the oracle) on the
cases the adapters' parameters exist for: thresholds given unsorted or tied (TorchMetrics
keeps their order), multilabel `ignore_index` leaving out single cells, and confidences of
exactly 1.0 or on a bin edge (TorchMetrics' own bin of 1.0, edges in float32)."""

from __future__ import annotations

from typing import Any

import pytest
import torch
import torchmetrics.classification as tm
from torch import Tensor

from torchtally.compat.torchmetrics import classification as ours


def _flat(value: Any) -> list[Tensor]:
    if isinstance(value, Tensor):
        return [value]
    return [leaf for item in value for leaf in _flat(item)]


def assert_same(theirs: Any, mine: Any) -> None:
    expected, got = _flat(theirs), _flat(mine)
    assert len(expected) == len(got)
    for a, b in zip(expected, got, strict=True):
        assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
        torch.testing.assert_close(b, a, equal_nan=True, atol=1e-6, rtol=1e-5)


THRESHOLDS = [7, [0.0, 0.25, 0.5, 1.0], [0.9, 0.1, 0.5, 0.3], [0.2, 0.7, 0.2, 0.1]]

CURVES = [
    ("BinaryROC", {}, "binary"),
    ("BinaryPrecisionRecallCurve", {}, "binary"),
    ("BinaryAUROC", {}, "binary"),
    ("BinaryAveragePrecision", {"ignore_index": -1}, "binary"),
    ("MulticlassROC", {"num_classes": 4}, "multiclass"),
    ("MulticlassAUROC", {"num_classes": 4, "average": "weighted"}, "multiclass"),
    ("MulticlassAveragePrecision", {"num_classes": 4, "ignore_index": -1}, "multiclass"),
    ("MultilabelPrecisionRecallCurve", {"num_labels": 3, "ignore_index": -1}, "multilabel"),
    ("MultilabelAUROC", {"num_labels": 3, "average": "micro", "ignore_index": -1}, "multilabel"),
    ("MultilabelAveragePrecision", {"num_labels": 3, "average": "micro"}, "multilabel"),
    ("MultilabelRecallAtFixedPrecision", {"num_labels": 3, "min_precision": 0.4}, "multilabel"),
]


def _inputs(task: str, seed: int) -> tuple[Tensor, Tensor]:
    generator = torch.Generator().manual_seed(seed)
    n = 48
    if task == "binary":
        preds = torch.rand(n, generator=generator)
        target = torch.randint(-1, 2, (n,), generator=generator)
    elif task == "multiclass":
        preds = torch.randn(n, 4, generator=generator)
        target = torch.randint(-1, 4, (n,), generator=generator)
    else:
        preds = torch.rand(n, 3, generator=generator)
        target = torch.randint(-1, 2, (n, 3), generator=generator)
    # a few scores exactly on a threshold: `score >= threshold` counts them
    preds.view(-1)[:4] = torch.tensor([0.0, 0.25, 0.5, 1.0])
    return preds, target


@pytest.mark.parametrize("thresholds", THRESHOLDS, ids=str)
@pytest.mark.parametrize(("name", "arguments", "task"), CURVES, ids=[c[0] for c in CURVES])
def test_binned_curves_are_torchmetrics(
    name: str, arguments: dict[str, Any], task: str, thresholds: Any
) -> None:
    theirs = getattr(tm, name)(thresholds=thresholds, **arguments)
    mine = getattr(ours, name)(thresholds=thresholds, **arguments)
    for seed in range(3):
        preds, target = _inputs(task, seed)
        if "ignore_index" not in arguments:  # -1 only where it is ignored
            target = target.clamp(min=0)
        assert_same(theirs(preds, target), mine(preds, target))
    assert_same(theirs.compute(), mine.compute())


@pytest.mark.parametrize("norm", ["l1", "l2", "max"])
@pytest.mark.parametrize("n_bins", [1, 4, 15])
def test_calibration_bins_as_torchmetrics(norm: str, n_bins: int) -> None:
    generator = torch.Generator().manual_seed(n_bins)
    preds = torch.rand(64, generator=generator)
    preds[:8] = 1.0  # TorchMetrics' own bin
    preds[8:16] = torch.linspace(0, 1, n_bins + 1)[torch.arange(8) % (n_bins + 1)]  # on edges
    target = torch.randint(0, 2, (64,), generator=generator)
    theirs = tm.BinaryCalibrationError(n_bins, norm)
    mine = ours.BinaryCalibrationError(n_bins, norm)
    for p, t in zip(preds.split(16), target.split(16), strict=True):
        assert_same(theirs(p, t), mine(p, t))
    assert_same(theirs.compute(), mine.compute())
    scores = torch.randn(64, 5, generator=generator).softmax(1)
    scores[:8] = torch.eye(5)[torch.arange(8) % 5]  # confidence 1.0
    classes = torch.randint(0, 5, (64,), generator=generator)
    assert_same(
        tm.MulticlassCalibrationError(5, n_bins, norm)(scores, classes),
        ours.MulticlassCalibrationError(5, n_bins, norm)(scores, classes),
    )
