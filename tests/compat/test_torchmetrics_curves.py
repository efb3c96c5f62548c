"""The exact curve mode (thresholds=None): a preallocated buffer that traces, syncs as one
gathered state, and refuses to answer over partial data."""

from __future__ import annotations

import pytest
import torch
import torchmetrics.classification as tmc

from torchtally._errors import MetricValueError
from torchtally.compat.torchmetrics import AUROC, classification
from torchtally.testing import assert_traceable

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def test_exact_is_the_default_and_matches_torchmetrics_over_many_batches() -> None:
    g = torch.Generator().manual_seed(3)
    ours, theirs = AUROC(task="binary"), tmc.BinaryAUROC()
    for _ in range(10):
        preds, target = torch.randn(50, generator=g), torch.randint(0, 2, (50,), generator=g)
        ours.update(preds, target)
        theirs.update(preds, target)
    assert ours.capacity == 1 << 16 and ours.binned is False
    torch.testing.assert_close(ours.compute().double(), theirs.compute().double())


def test_overflow_is_a_clear_error() -> None:
    metric = classification.BinaryAveragePrecision(capacity=8)
    metric.update(torch.rand(6), torch.randint(0, 2, (6,)))
    metric.update(torch.rand(6), torch.randint(0, 2, (6,)))
    with pytest.raises(MetricValueError, match=r"received 12 samples.*capacity=8.*capacity >= 12"):
        metric.compute()


def test_capacity_needs_exact_mode() -> None:
    with pytest.raises(ValueError, match=r"Argument `capacity`.*thresholds=None"):
        classification.BinaryROC(thresholds=10, capacity=100)
    with pytest.raises(ValueError, match=r"Argument `capacity` must be None or an integer >= 1"):
        classification.MulticlassAUROC(3, capacity=0)


@pytest.mark.parametrize(
    ("metric", "preds", "target"),
    [
        (classification.BinaryAUROC(capacity=64), torch.randn(16), torch.randint(0, 2, (16,))),
        (
            classification.MultilabelAveragePrecision(3, capacity=64),
            torch.rand(8, 3),
            torch.randint(0, 2, (8, 3)),
        ),
    ],
    ids=["BinaryAUROC", "MultilabelAveragePrecision"],
)
def test_exact_update_is_traceable(metric: classification.BinaryAUROC, preds, target) -> None:
    # compute reads the fill count on the host (curves have data-dependent lengths)
    report = assert_traceable(metric, preds, target, check_compute=False)
    assert report.graphs == 1 and report.recompiles == 0 and not report.unbacked


def test_exact_state_holds_only_counted_rows_as_valid() -> None:
    metric = classification.BinaryAUROC(ignore_index=-1, capacity=10)
    metric.update(torch.tensor([0.2, 0.7, 0.9]), torch.tensor([0, -1, 1]))
    assert metric.valid[:3, 0].tolist() == [True, False, True]
    assert float(metric.compute()) == 1.0


def test_exact_curves_come_in_torchmetrics_dtype() -> None:
    g = torch.Generator().manual_seed(5)
    preds, target = torch.rand(40, generator=g), torch.randint(0, 2, (40,), generator=g)
    for name in ("BinaryROC", "BinaryPrecisionRecallCurve"):
        ours, theirs = getattr(classification, name)(), getattr(tmc, name)()
        ours.update(preds, target)
        theirs.update(preds, target)
        mine, other = ours.compute(), theirs.compute()
        assert [t.dtype for t in mine] == [t.dtype for t in other] == [torch.float32] * 3
        for a, b in zip(mine, other, strict=True):
            torch.testing.assert_close(a, b)


@pytest.mark.parametrize("name", ["MulticlassROC", "MulticlassPrecisionRecallCurve"])
def test_binned_micro_curve_is_the_binary_curve_of_every_cell(name: str) -> None:
    # TorchMetrics 1.9's binned micro multiclass curves fail in update (a state-shape bug);
    # the oracle is its binary curve over the flattened softmax scores and one-hot targets.
    g = torch.Generator().manual_seed(11)
    logits, target = torch.randn(40, 4, generator=g), torch.randint(0, 4, (40,), generator=g)
    ours = getattr(classification, name)(4, thresholds=11, average="micro")
    ours.update(logits, target)
    binary = getattr(tmc, name.replace("Multiclass", "Binary"))(thresholds=11)
    binary.update(logits.softmax(-1).flatten(), torch.nn.functional.one_hot(target, 4).flatten())
    for mine, theirs in zip(ours.compute(), binary.compute(), strict=True):
        torch.testing.assert_close(mine.double(), theirs.double(), equal_nan=True)
