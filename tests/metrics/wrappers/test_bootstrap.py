"""BootStrapper: replicas equal the wrapped metric under the same Poisson weights (an explicit
per-replica loop), statistics agree with TorchMetrics' BootStrapper, and the state behaves."""

from __future__ import annotations

import doctest

import pytest
import torch
from torchmetrics.classification import MulticlassAccuracy
from torchmetrics.wrappers import BootStrapper as TMBootStrapper

import torchtally.metrics.wrappers._bootstrap as bootstrap_module
from torchtally.metrics import AccuracyMetric, MeanMetric, MetricValueError
from torchtally.metrics.calibration import CalibrationErrorMetric
from torchtally.metrics.curves import AveragePrecisionMetric
from torchtally.metrics.wrappers import BootStrapper
from torchtally.metrics.wrappers._bootstrap import poisson_weights
from torchtally.testing import assert_traceable


def _data(seed: int, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, 3, (n,), generator=g)
    scores = torch.randn(n, 3, generator=g)
    scores[torch.arange(n), labels] += 1.0
    return labels, scores


def test_replicas_equal_the_metric_under_the_same_poisson_weights() -> None:
    labels, scores = _data(0, 50)
    boot = BootStrapper(AccuracyMetric(), num_bootstraps=6, raw=True, seed=11)
    boot.update(labels[:20], scores[:20])
    boot.update(labels[20:], scores[20:])
    first = poisson_weights(11 * 1_000_003, torch.tensor(0), 6, 20)
    second = poisson_weights(11 * 1_000_003, torch.tensor(1), 6, 30)
    expected = []
    for r in range(6):
        metric = AccuracyMetric()
        metric.update(labels[:20], scores[:20], first[r])
        metric.update(labels[20:], scores[20:], second[r])
        expected.append(metric.compute())
    expected_values = torch.stack(expected)
    out = boot.compute()
    torch.testing.assert_close(out["raw"], expected_values)
    torch.testing.assert_close(out["mean"], expected_values.mean())
    torch.testing.assert_close(out["std"], expected_values.std())


def test_calibration_replicas_with_user_weights() -> None:
    g = torch.Generator().manual_seed(2)
    preds, target = torch.rand(40, generator=g), torch.randint(0, 2, (40,), generator=g)
    weights = torch.rand(40, generator=g)
    boot = BootStrapper(CalibrationErrorMetric(n_bins=5), num_bootstraps=4, raw=True, quantile=0.5)
    boot.update(preds, target, weights=weights)
    draws = poisson_weights(0, torch.tensor(0), 4, 40)
    expected = torch.stack(
        [CalibrationErrorMetric(n_bins=5)(preds, target, draws[r] * weights) for r in range(4)]
    )
    out = boot.compute()
    torch.testing.assert_close(out["raw"], expected)
    torch.testing.assert_close(out["quantile"], expected.quantile(0.5))


def test_statistics_agree_with_torchmetrics_bootstrapper() -> None:
    labels, scores = _data(1, 4000)
    torch.manual_seed(0)
    theirs = TMBootStrapper(
        MulticlassAccuracy(3, average="micro"), num_bootstraps=200, sampling_strategy="poisson"
    )
    # Frequency weights: the mean of correctness (AccuracyMetric follows cstorch's weighting).
    ours = BootStrapper(MeanMetric(), num_bootstraps=200, weight_arg="weight")
    correct = (scores.argmax(1) == labels).double()
    for start in range(0, 4000, 1000):
        theirs.update(scores[start : start + 1000], labels[start : start + 1000])
        ours.update(correct[start : start + 1000])
    a, b = ours.compute(), theirs.compute()
    # Both estimate the sampling distribution of accuracy over 4000 samples: sd ~ 0.0075.
    assert float(a["mean"]) == pytest.approx(float(b["mean"]), abs=0.003)
    assert float(a["std"]) == pytest.approx(float(b["std"]), rel=0.25)


def test_merge_is_replica_wise_and_reset_restores() -> None:
    labels, scores = _data(4, 30)
    first, second = (
        BootStrapper(AccuracyMetric(), 5, raw=True),
        BootStrapper(AccuracyMetric(), 5, raw=True),
    )
    first.update(labels[:10], scores[:10])
    second.update(labels[10:], scores[10:])
    # Both replicas r saw their part under the draws of update 0 (seed 0, rank 0): merged,
    # replica r is the wrapped metric over both parts under those weights.
    head = poisson_weights(0, torch.tensor(0), 5, 10)
    tail = poisson_weights(0, torch.tensor(0), 5, 20)
    expected = []
    for r in range(5):
        metric = AccuracyMetric()
        metric.update(labels[:10], scores[:10], head[r])
        metric.update(labels[10:], scores[10:], tail[r])
        expected.append(metric.compute())
    merged = first.merge_state(second).compute()["raw"]
    torch.testing.assert_close(merged, torch.stack(expected).reshape(-1))
    first.reset()
    fresh = BootStrapper(AccuracyMetric(), 5, raw=True)
    for (name, state, _), (_, clean, _) in zip(first.states(), fresh.states(), strict=True):
        torch.testing.assert_close(state, clean, msg=f"state {name} after reset")


def test_errors_of_the_wrapped_metric_raise() -> None:
    boot = BootStrapper(AccuracyMetric(), 3)
    boot.update(torch.tensor([0, 1]), torch.tensor([[float("nan"), 0.0, 0.0], [0.0, 1.0, 0.0]]))
    with pytest.raises(MetricValueError):
        boot.compute()


def test_empty_replicas_follow_the_wrapped_metrics_check_values() -> None:
    # One sample: a replica whose Poisson(1) draw is 0 saw nothing and has no mean (NaN).
    draws = poisson_weights(0, torch.tensor(0), 8, 1).reshape(-1)
    empty = int((draws == 0).sum())
    assert 0 < empty < 8  # the case under test: some replicas empty, not all
    checked = BootStrapper(MeanMetric(), 8, raw=True, weight_arg="weight")
    checked.update(torch.tensor([3.0]))
    with pytest.raises(MetricValueError, match=rf"{empty} of 8 bootstrap replicas have no value"):
        checked.compute()
    unchecked = BootStrapper(MeanMetric(check_values=False), 8, raw=True, weight_arg="weight")
    unchecked.update(torch.tensor([3.0]))
    expected = torch.where(draws == 0, float("nan"), 3.0)
    torch.testing.assert_close(
        unchecked.compute()["raw"], expected, check_dtype=False, equal_nan=True
    )


def test_argument_errors() -> None:
    with pytest.raises(TypeError, match="`metric` must be a torchtally Metric"):
        BootStrapper(MulticlassAccuracy(3))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`num_bootstraps` must be an integer >= 2"):
        BootStrapper(AccuracyMetric(), 1)
    with pytest.raises(ValueError, match="`quantile` must be"):
        BootStrapper(AccuracyMetric(), quantile=1.5)
    with pytest.raises(ValueError, match="no 'cat'"):
        BootStrapper(AveragePrecisionMetric(capacity=8))


def test_weight_arg_names_the_keyword() -> None:
    boot = BootStrapper(MeanMetric(), 4, raw=True, weight_arg="weight")
    values = torch.arange(10.0)
    boot.update(values)
    draws = poisson_weights(0, torch.tensor(0), 4, 10)
    torch.testing.assert_close(
        boot.compute()["raw"],
        (draws * values).sum(1).double() / draws.sum(1).double(),
        check_dtype=False,
    )


def test_poisson_weights_follow_poisson_one() -> None:
    draws = poisson_weights(7, torch.tensor(3), 50, 4000).reshape(-1)
    pmf = torch.exp(-1.0 - torch.lgamma(torch.arange(6.0) + 1.0))  # P(X = k), k < 6
    observed = torch.stack([(draws == k).double().mean() for k in range(6)])
    torch.testing.assert_close(observed, pmf.double(), atol=3e-3, rtol=0)
    assert abs(float(draws.mean()) - 1.0) < 0.01 and abs(float(draws.var()) - 1.0) < 0.02
    other = poisson_weights(7, torch.tensor(4), 50, 4000).reshape(-1)
    assert abs(float(torch.corrcoef(torch.stack([draws, other]))[0, 1])) < 0.01


def test_traceable() -> None:
    labels, scores = _data(6, 16)
    report = assert_traceable(BootStrapper(AccuracyMetric(), 8), labels, scores)
    assert report.graphs == 1


def test_docstring_example() -> None:
    result = doctest.testmod(bootstrap_module, extraglobs={"torch": torch})
    assert result.attempted > 0 and result.failed == 0
