"""MetricTracker against TorchMetrics' MetricTracker; ClasswiseWrapper against the wrapped
metric's per-class values and TorchMetrics' ClasswiseWrapper."""

from __future__ import annotations

import doctest
import importlib

import pytest
import torch
import torchmetrics
from torchmetrics.classification import MulticlassAveragePrecision
from torchmetrics.wrappers import ClasswiseWrapper as TMClasswiseWrapper
from torchmetrics.wrappers import MetricTracker as TMMetricTracker

from torchtally.metrics import MeanMetric, MetricCollection
from torchtally.metrics.curves import AveragePrecisionMetric
from torchtally.metrics.wrappers import ClasswiseWrapper, MetricTracker


@pytest.mark.parametrize("higher", [True, False])
def test_tracker_matches_torchmetrics(higher: bool) -> None:
    g = torch.Generator().manual_seed(0)
    ours = MetricTracker(MeanMetric(), higher_is_better=higher)
    theirs = TMMetricTracker(torchmetrics.MeanMetric(), maximize=higher)
    for _ in range(5):
        ours.increment()
        theirs.increment()
        for _ in range(3):
            batch = torch.rand(4, generator=g, dtype=torch.float64)
            ours.update(batch)
            theirs.update(batch)
    torch.testing.assert_close(ours.compute_all(), theirs.compute_all(), check_dtype=False)
    value, step = ours.best_metric(return_step=True)
    their_value, their_step = theirs.best_metric(return_step=True)
    assert step == their_step and value == pytest.approx(their_value)
    assert ours.n_steps == 5


def test_tracker_of_a_collection_uses_each_direction() -> None:
    collection = MetricCollection({"loss": MeanMetric(), "score": MeanMetric()})
    tracker = MetricTracker(collection, higher_is_better={"loss": False, "score": True})
    for loss, score in ((3.0, 0.2), (1.0, 0.1), (2.0, 0.9)):
        tracker.increment()
        tracker.update(torch.tensor([loss]))  # a collection feeds every member the batch
        collection["score"].reset()
        collection["score"].update(torch.tensor([score]))
    best, steps = tracker.best_metric(return_step=True)
    assert steps == {"loss": 1, "score": 2}
    assert best["loss"] == 1.0 and best["score"] == pytest.approx(0.9)


def test_tracker_errors() -> None:
    tracker = MetricTracker(MeanMetric())
    with pytest.raises(ValueError, match="increment"):
        tracker.update(torch.ones(1))
    with pytest.raises(TypeError, match="`higher_is_better` must be a bool"):
        MetricTracker(MeanMetric(), higher_is_better="max")  # type: ignore[arg-type]


def test_classwise_matches_the_metric_and_torchmetrics_keys() -> None:
    g = torch.Generator().manual_seed(1)
    scores = torch.softmax(torch.randn(30, 3, generator=g), 1)
    labels = torch.cat([torch.arange(3), torch.randint(0, 3, (27,), generator=g)])
    ours = ClasswiseWrapper(
        AveragePrecisionMetric("multiclass", 3, thresholds=11, average="none"),
        labels=["a", "b", "c"],
        prefix="ap_",
    )
    theirs = TMClasswiseWrapper(
        MulticlassAveragePrecision(3, thresholds=11, average=None),
        labels=["a", "b", "c"],
        prefix="ap_",
    )
    out, expected = ours(scores, labels), theirs(scores, labels)
    assert list(out) == list(expected)
    for key in out:
        assert float(out[key]) == pytest.approx(float(expected[key]), abs=1e-6)
    ours.reset()
    assert float(ours.metric.histogram.sum()) == 0.0


def test_classwise_errors() -> None:
    with pytest.raises(ValueError, match="must name every class"):
        wrapper = ClasswiseWrapper(
            AveragePrecisionMetric("multiclass", 3, thresholds=5, average="none"), labels=["a"]
        )
        wrapper(torch.softmax(torch.randn(4, 3), 1), torch.tensor([0, 1, 2, 0]))
    with pytest.raises(ValueError, match=r"must return a \(C,\) tensor"):
        ClasswiseWrapper(MeanMetric())(torch.ones(2))


def test_docstring_examples() -> None:
    for name in ("torchtally.metrics.wrappers._tracker", "torchtally.metrics.wrappers._classwise"):
        result = doctest.testmod(importlib.import_module(name), extraglobs={"torch": torch})
        assert result.attempted > 0 and result.failed == 0
