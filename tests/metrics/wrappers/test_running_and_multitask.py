"""Running against TorchMetrics' Running and a direct computation over the window;
MultitaskWrapper against its members."""

from __future__ import annotations

import doctest
import importlib

import pytest
import torch
import torchmetrics
from torchmetrics.wrappers import Running as TMRunning

from torchtally.metrics import AccuracyMetric, MeanMetric, MetricValueError, MSEMetric
from torchtally.metrics.calibration import CalibrationErrorMetric
from torchtally.metrics.curves import AveragePrecisionMetric
from torchtally.metrics.wrappers import MultitaskWrapper, Running


@pytest.mark.parametrize("window", [1, 3])
def test_running_mean_matches_torchmetrics(window: int) -> None:
    g = torch.Generator().manual_seed(0)
    ours, theirs = Running(MeanMetric(), window), TMRunning(torchmetrics.MeanMetric(), window)
    for _ in range(7):
        batch = torch.rand(5, generator=g, dtype=torch.float64)
        ours.update(batch)
        theirs.update(batch)
        assert float(ours.compute()) == pytest.approx(float(theirs.compute()))


def test_running_equals_the_metric_over_the_last_updates() -> None:
    g = torch.Generator().manual_seed(1)
    batches = [
        (torch.softmax(torch.randn(6, 3, generator=g), 1), torch.randint(0, 3, (6,), generator=g))
        for _ in range(5)
    ]
    running = Running(CalibrationErrorMetric(3, n_bins=4), window=2)
    for i, batch in enumerate(batches):
        running.update(*batch)
        whole = CalibrationErrorMetric(3, n_bins=4)
        for previous in batches[max(0, i - 1) : i + 1]:
            whole.update(*previous)
        torch.testing.assert_close(running.compute(), whole.compute())


def test_running_reports_errors_in_the_window_and_refuses_cat_states() -> None:
    running = Running(AccuracyMetric(), window=2)
    running.update(torch.tensor([0]), torch.tensor([[float("nan"), 0.0]]))
    with pytest.raises(MetricValueError):
        running.compute()
    for _ in range(2):  # the bad update leaves the window
        running.update(torch.tensor([0]), torch.tensor([[1.0, 0.0]]))
    assert float(running.compute()) == 1.0
    with pytest.raises(ValueError, match="no 'cat'"):
        Running(AveragePrecisionMetric(capacity=4))
    with pytest.raises(ValueError, match="`window` must be an integer >= 1"):
        Running(MeanMetric(), 0)


def test_multitask_feeds_each_task() -> None:
    tasks = MultitaskWrapper({"cls": AccuracyMetric(), "reg": MSEMetric()})
    labels, predictions = torch.tensor([0, 1, 1]), torch.tensor([0, 1, 0])
    target, prediction = torch.tensor([0.0, 1.0]), torch.tensor([1.0, 1.0])
    out = tasks(
        {"cls": (labels, predictions), "reg": {"labels": target, "predictions": prediction}}
    )
    assert float(out["cls"]) == pytest.approx(2 / 3)
    assert float(out["reg"]) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="one entry per task"):
        tasks.update({"cls": (labels, predictions)})
    tasks.reset()
    assert float(tasks.task_metrics["cls"].total) == 0.0
    assert float(tasks.task_metrics["reg"].num_updates) == 0


def test_docstring_examples() -> None:
    for name in ("torchtally.metrics.wrappers._running", "torchtally.metrics.wrappers._multitask"):
        result = doctest.testmod(importlib.import_module(name), extraglobs={"torch": torch})
        assert result.attempted > 0 and result.failed == 0
