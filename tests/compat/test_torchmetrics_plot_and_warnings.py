"""Compat plots and warnings as TorchMetrics users know them: `compute` before `update` warns
with TorchMetrics' own message (oracle: real TorchMetrics), and `plot` labels its axes, draws
the optimal value and writes a confusion matrix's counts in; without matplotlib it names the
extra."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest
import torch
import torchmetrics

import torchtally.compat.torchmetrics as ttm

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")


def _warnings_of(call: object) -> list[str]:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        call()  # type: ignore[operator]
    return [str(w.message) for w in seen if issubclass(w.category, UserWarning)]


def test_compute_before_update_warns_as_torchmetrics_does() -> None:
    ours = _warnings_of(ttm.Accuracy(task="multiclass", num_classes=4).compute)
    theirs = _warnings_of(torchmetrics.Accuracy(task="multiclass", num_classes=4).compute)
    assert any("called before the ``update``" in w for w in theirs)
    assert [w for w in ours if "called before" in w] == [w for w in theirs if "called before" in w]


def test_compute_after_update_does_not_warn() -> None:
    metric = ttm.MeanSquaredError()
    metric.update(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 3.0]))
    assert not [w for w in _warnings_of(metric.compute) if "called before" in w]
    metric.reset()  # no data again: TorchMetrics warns again after a reset
    assert [w for w in _warnings_of(metric.compute) if "called before" in w]


def test_a_scalar_plot_has_labels_and_the_optimal_value() -> None:
    metric = ttm.Accuracy(task="multiclass", num_classes=3)
    metric.update(torch.tensor([0, 1, 2, 2]), torch.tensor([0, 1, 2, 1]))
    fig, ax = metric.plot()
    assert ax.get_title() == "MulticlassAccuracy" and ax.get_ylabel() == "MulticlassAccuracy"
    optimal = [line for line in ax.get_lines() if line.get_label() == "Optimal value"]
    assert len(optimal) == 1 and list(optimal[0].get_ydata()) == [1.0, 1.0]
    assert float(ax.get_lines()[0].get_ydata()[0]) == pytest.approx(0.75)
    matplotlib.pyplot.close(fig)


def test_an_error_metric_draws_its_lower_bound_as_optimal() -> None:
    metric = ttm.MeanSquaredError()
    metric.update(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 3.0]))
    fig, ax = metric.plot([metric.compute(), metric.compute()])
    assert ax.get_xlabel() == "step"
    optimal = [line for line in ax.get_lines() if line.get_label() == "Optimal value"]
    assert list(optimal[0].get_ydata()) == [0.0, 0.0]
    matplotlib.pyplot.close(fig)


def test_a_confusion_matrix_plot_writes_its_counts_in() -> None:
    metric = ttm.ConfusionMatrix(task="multiclass", num_classes=3)
    labels, predicted = torch.tensor([0, 1, 2, 2, 2]), torch.tensor([0, 2, 2, 2, 1])
    metric.update(predicted, labels)
    fig, ax = metric.plot()
    expected = torchmetrics.ConfusionMatrix(task="multiclass", num_classes=3)(predicted, labels)
    texts = [int(t.get_text()) for t in ax.texts]
    assert texts == expected.reshape(-1).tolist()
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("Predicted class", "True class")
    assert ax.get_title() == "MulticlassConfusionMatrix"
    matplotlib.pyplot.close(fig)


def test_plot_without_matplotlib_names_the_extra() -> None:
    code = (
        "import sys, torch; sys.modules['matplotlib'] = None; "
        "sys.modules['matplotlib.pyplot'] = None; "
        "import torchtally.compat.torchmetrics as ttm; "
        "m = ttm.MeanSquaredError(); m.update(torch.ones(2), torch.ones(2)); m.plot()"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode != 0
    assert "ImportError" in done.stderr and "torchtally[plots]" in done.stderr
    assert "MeanSquaredError.plot" in done.stderr
