"""The few-kernel updates of the regression metrics and of MeanMetric (issue 26), which a GPU
takes (and the meta device counts), run here on CPU tensors with real values: the eager CPU
switch is forced off. They must give the oracles' values (scikit-learn, numpy in float64) and
the same values, counts and messages as the eager CPU path on the same calls."""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterator

import numpy as np
import pytest
import torch
from sklearn.metrics import mean_absolute_error, mean_squared_error, r2_score

from torchtally.metrics import (
    BootStrapper,
    MAEMetric,
    MeanMetric,
    MetricValueError,
    MSEMetric,
    R2ScoreMetric,
    SMAPEMetric,
)
from torchtally.metrics.aggregation import _mean as mean_metric_module
from torchtally.metrics.regression import _errors as error_metric_module
from torchtally.metrics.regression import _r2 as r2_metric_module

#: The modules whose updates choose between the eager CPU path and the few-kernel one.
SWITCHED = (error_metric_module, r2_metric_module, mean_metric_module)
BAD = (float("nan"), float("inf"), float("-inf"))


@pytest.fixture(params=["cpu path", "gpu path"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "gpu path":
        for module in SWITCHED:
            monkeypatch.setattr(module, "eager_cpu", lambda tensor: False)
    return str(request.param)


@pytest.fixture
def gpu_path(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for module in SWITCHED:
        monkeypatch.setattr(module, "eager_cpu", lambda tensor: False)
    yield


def _smape(y: np.ndarray, p: np.ndarray) -> float:
    denominator = np.abs(p) + np.abs(y)
    ratio = np.divide(np.abs(p - y), denominator, out=np.zeros_like(y), where=denominator != 0)
    return float(200.0 * ratio.mean())


def _pair(size: int, seed: int, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    labels = torch.randn(size, generator=g, dtype=torch.float64) * 3
    predictions = labels + torch.randn(size, generator=g, dtype=torch.float64)
    labels[:4], predictions[:2] = 0.0, 0.0  # p = y = 0 twice: SMAPE's 0 / 0 counts as 0
    return labels.to(dtype), predictions.to(dtype)


ORACLES: list[tuple[Callable[[], object], Callable[[np.ndarray, np.ndarray], float]]] = [
    (MSEMetric, mean_squared_error),
    (MAEMetric, mean_absolute_error),
    (SMAPEMetric, _smape),
    (R2ScoreMetric, r2_score),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.int64])
@pytest.mark.parametrize(("make", "oracle"), ORACLES, ids=["mse", "mae", "smape", "r2"])
def test_values_match_the_oracles_on_both_paths(
    path: str, dtype: torch.dtype, make: Callable[[], object], oracle: Callable
) -> None:
    labels, predictions = _pair(1000, 1, dtype)
    metric = make().coalesce_updates(False)  # type: ignore[attr-defined]
    for a, b in ((0, 0), (0, 377), (377, 377), (377, 1000)):  # empty batches too
        metric.update(labels[a:b], predictions[a:b])
    y, p = labels.double().numpy(), predictions.double().numpy()
    assert float(metric.compute()) == pytest.approx(oracle(y, p), rel=1e-12)


@pytest.mark.parametrize("multioutput", ["raw_values", "uniform_average", "variance_weighted"])
def test_multioutput_r2_matches_sklearn_on_both_paths(path: str, multioutput: str) -> None:
    g = torch.Generator().manual_seed(2)
    labels = torch.randn(400, 3, generator=g)
    predictions = labels + torch.randn(400, 3, generator=g)
    labels[:, 2] = 1.5  # a constant output
    metric = R2ScoreMetric(3, multioutput).coalesce_updates(False)
    metric.update(labels[:150], predictions[:150])
    metric.update(labels[150:].t().contiguous().t(), predictions[150:])  # a strided batch
    y, p = labels.double().numpy(), predictions.double().numpy()
    expected = r2_score(y, p, multioutput=multioutput)
    np.testing.assert_allclose(metric.compute().numpy(), expected, rtol=1e-12)


def _sprinkle(values: torch.Tensor, seed: int, count: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    flat = values.reshape(-1)
    picks = torch.randperm(flat.numel(), generator=g)[:count]
    for i, index in enumerate(picks.tolist()):
        flat[index] = BAD[i % 3]
    return values


@pytest.mark.parametrize(
    ("make", "shape"),
    [
        (MSEMetric, (300,)),
        (MAEMetric, (300,)),
        (SMAPEMetric, (300,)),
        (R2ScoreMetric, (300,)),
        (lambda: R2ScoreMetric(2), (150, 2)),
    ],
    ids=["mse", "mae", "smape", "r2", "r2-two-outputs"],
)
def test_non_finite_counts_match_numpy_on_both_paths(
    path: str, make: Callable[[], object], shape: tuple[int, ...]
) -> None:
    labels = _sprinkle(torch.randn(shape), 3, 7)
    predictions = _sprinkle(torch.randn(shape), 4, 5)
    predictions.reshape(-1)[labels.reshape(-1).isnan().nonzero()[0]] = float("inf")  # both bad
    metric = make()
    metric.update(labels, predictions)  # type: ignore[attr-defined]
    bad_labels = int((~np.isfinite(labels.numpy())).sum())
    bad_predictions = int((~np.isfinite(predictions.numpy())).sum())
    with pytest.raises(MetricValueError) as error:
        metric.compute()  # type: ignore[attr-defined]
    assert f"non-finite labels ({bad_labels} values)" in str(error.value)
    assert f"non-finite predictions ({bad_predictions} values)" in str(error.value)


@pytest.mark.parametrize("make", [MSEMetric, MAEMetric, SMAPEMetric, R2ScoreMetric])
def test_float32_extremes_stay_finite_and_exact(path: str, make: Callable[[], object]) -> None:
    """±3e38 labels and predictions: their differences (6e38) and squares overflow float32,
    not the float64 sums (issue 25, defect class 4)."""
    high = torch.full((2048,), 3e38, dtype=torch.float32)
    labels = torch.cat([high, -high, torch.full((8,), 1e35)])
    predictions = torch.cat([-high, high, torch.full((8,), -1e35)])
    metric = make().coalesce_updates(False)  # type: ignore[attr-defined]
    metric.update(labels, predictions)
    y, p = labels.double().numpy(), predictions.double().numpy()
    oracle = dict(zip((MSEMetric, MAEMetric, SMAPEMetric, R2ScoreMetric), ORACLES, strict=True))
    expected = oracle[make][1](y, p)
    got = float(metric.compute())
    assert np.isfinite(got)
    assert got == pytest.approx(expected, rel=1e-12)


def test_both_paths_add_the_same_state(monkeypatch: pytest.MonkeyPatch) -> None:
    """The packed states (MSE's totals, R2's sums, the mean's totals) are the same sums on both
    paths, to the last bits that the order of a float64 sum moves."""
    labels, predictions = _pair(5000, 5, torch.float32)
    cpu = [make().coalesce_updates(False) for make in (MSEMetric, R2ScoreMetric, MeanMetric)]
    for metric in cpu[:2]:
        metric.update(labels, predictions)
    cpu[2].update(predictions, 2.5)
    for module in SWITCHED:
        monkeypatch.setattr(module, "eager_cpu", lambda tensor: False)
    gpu = [make().coalesce_updates(False) for make in (MSEMetric, R2ScoreMetric, MeanMetric)]
    for metric in gpu[:2]:
        metric.update(labels, predictions)
    gpu[2].update(predictions, 2.5)
    for ours, theirs in zip(cpu, gpu, strict=True):
        for (name, a), (_, b) in zip(
            ours.state_dict_all().items(), theirs.state_dict_all().items(), strict=True
        ):
            torch.testing.assert_close(a, b, rtol=1e-13, atol=1e-9, msg=name)


# ------------------------------------------------------------------------------- the mean


def _values(size: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(size, generator=g) * 10 + 3


@pytest.mark.parametrize(
    "weight", [1.0, 2.5, 3, 0.0, 2.032424978633556e-195, "tensor", "one", "broadcast"]
)
def test_mean_matches_numpy_on_both_paths(path: str, weight: object) -> None:
    g = torch.Generator().manual_seed(6)
    values = _values(600, 6).reshape(200, 3)
    if weight == "tensor":
        weights: object = torch.rand(200, 3, generator=g)
    elif weight == "one":
        weights = torch.tensor([0.75])
    elif weight == "broadcast":
        weights = torch.rand(3, generator=g)
    else:
        weights = weight
    metric = MeanMetric().coalesce_updates(False)
    for a, b in ((0, 70), (70, 70), (70, 200)):
        w = weights[a:b] if weight == "tensor" else weights  # type: ignore[index]
        metric.update(values[a:b], w)
    w64 = (
        np.broadcast_to(np.asarray(weights, dtype=np.float64), values.shape)
        if isinstance(weights, torch.Tensor)
        else np.full(values.shape, float(weights))  # type: ignore[arg-type]
    )
    v = values.double().numpy()
    if w64.sum() == 0:
        assert torch.isnan(metric.compute())
        return
    assert float(metric.compute().double()) == pytest.approx(
        float((v * w64).sum() / w64.sum()), rel=1e-6
    )
    total = metric.weight_total
    assert float(total) == pytest.approx(float(w64.sum()), rel=1e-12)


def test_mean_counts_and_edges_on_both_paths(path: str) -> None:
    values = _sprinkle(_values(500, 7), 8, 6)
    weights = torch.rand(500)
    weights[[3, 9]] = torch.tensor([-1.0, float("nan")])
    metric = MeanMetric()
    metric.update(values, weights)
    metric.update(values, 2.0)
    with pytest.raises(MetricValueError, match=re.escape("non-finite values (12 values)")):
        metric.compute()
    with pytest.raises(MetricValueError, match=re.escape("negative weights (2 values)")):
        metric.compute()
    # a weight of 0 keeps 0 * inf = NaN in the weighted sum, as the plain product does
    unchecked = MeanMetric(check_values=False)
    unchecked.update(torch.tensor([float("inf"), 1.0]), 0.0)
    assert torch.isnan(unchecked.weighted_sum) and float(unchecked.weight_total) == 0.0
    # the cancelling float32 extremes of issue 25 (defect class 4), each batch summed apart
    high = torch.full((4096,), 3e38, dtype=torch.float32)
    extremes = MeanMetric().coalesce_updates(False)
    for batch in (high, -high, torch.full((8,), 2.0)):
        extremes.update(batch)
    # (a float32 result, as cstorch's)
    assert float(extremes.compute()) == pytest.approx(2.0 * 8 / (2 * 4096 + 8), rel=1e-6)


@pytest.mark.usefixtures("gpu_path")
def test_bootstrap_of_the_mean_runs_without_the_per_replica_fallback() -> None:
    """vmap over MeanMetric's update (BootStrapper's replicas): the in-place matrix products
    have no batching rule, so the update adds out-of-place sums instead (no fallback loop)."""
    boot = BootStrapper(MeanMetric(), 6, raw=True, weight_arg="weight", seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "There is a performance drop ..." would raise
        boot.update(_values(50, 9), weight=torch.rand(50))
    replicas = boot.compute()["raw"]
    assert replicas.shape == (6,) and bool(torch.isfinite(replicas).all())


# --------------------------------------------------------------------- older checkpoints


def test_checkpoints_with_the_unpacked_states_still_load() -> None:
    """A checkpoint written before the sums were packed (`totals`, R2's `sums`) loads, by
    `load_state_dict` and `load_state_dict_all`, and gives the value it was saved with."""
    labels, predictions = _pair(300, 10, torch.float64)
    y, p = labels.numpy(), predictions.numpy()
    residual = p - y
    # as the last version saved them: every 0-d state as a (1,) tensor
    old = {
        MSEMetric: {"error_sum": [float((residual**2).sum())], "count": [300.0]},
        MeanMetric: {"weighted_sum": [float(y.sum())], "weight_total": [300.0]},
        R2ScoreMetric: {
            "sum_y": [float(y.sum())],
            "sum_y2": [float((y**2).sum())],
            "sum_squared_error": [float((residual**2).sum())],
            "count": [300.0],
        },
    }
    expected = {
        MSEMetric: mean_squared_error(y, p),
        MeanMetric: float(y.mean()),
        R2ScoreMetric: r2_score(y, p),
    }
    for make, sums in old.items():
        saved = {
            "_num_updates": torch.tensor([1]),
            "_errors": torch.zeros(2, dtype=torch.int64),
            **{name: torch.tensor(value, dtype=torch.float64) for name, value in sums.items()},
        }
        by_state_dict = make().persistent()
        by_state_dict.load_state_dict(dict(saved))
        by_all = make()
        by_all.load_state_dict_all(dict(saved))
        for metric in (by_state_dict, by_all):
            assert float(metric.compute()) == pytest.approx(expected[make], rel=1e-6)
