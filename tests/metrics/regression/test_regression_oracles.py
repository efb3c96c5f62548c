"""Regression metrics against scikit-learn, accumulated over random batch splits."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.metrics import mean_absolute_error, mean_squared_error, r2_score

from torchtally.functional import r2_score as tt_r2_score
from torchtally.functional import smape as tt_smape
from torchtally.metrics import MAEMetric, MSEMetric, R2ScoreMetric, SMAPEMetric

FINITE = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False, width=64)


@st.composite
def regression_data(draw: st.DrawFn, outputs: int = 1) -> tuple[np.ndarray, np.ndarray, list[int]]:
    n = draw(st.integers(2, 60))
    shape = (n,) if outputs == 1 else (n, outputs)
    y = draw(arrays(np.float64, shape, elements=FINITE))
    p = draw(arrays(np.float64, shape, elements=FINITE))
    cuts = sorted(draw(st.lists(st.integers(1, n - 1), max_size=4)))
    return y, p, cuts


def _accumulate(metric, y: np.ndarray, p: np.ndarray, cuts: list[int], dtype: torch.dtype):
    bounds = [0, *cuts, len(y)]
    for a, b in itertools.pairwise(bounds):
        metric.update(torch.tensor(y[a:b], dtype=dtype), torch.tensor(p[a:b], dtype=dtype))
    return metric.compute()


@pytest.mark.parametrize(
    ("make", "oracle"),
    [(MSEMetric, mean_squared_error), (MAEMetric, mean_absolute_error)],
    ids=["mse", "mae"],
)
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["f64", "f32"])
@settings(max_examples=40, deadline=None)
@given(data=regression_data())
def test_mean_errors_match_sklearn(make, oracle, dtype, data) -> None:
    y, p, cuts = data
    if dtype == torch.float32:
        y, p = y.astype(np.float32).astype(np.float64), p.astype(np.float32).astype(np.float64)
    got = float(_accumulate(make(), y, p, cuts, dtype))
    rtol = 1e-9 if dtype == torch.float64 else 1e-5
    assert got == pytest.approx(oracle(y, p), rel=rtol, abs=1e-9)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["f64", "f32"])
@settings(max_examples=60, deadline=None)
@given(data=regression_data())
def test_r2_matches_sklearn(dtype, data) -> None:
    y, p, cuts = data
    if dtype == torch.float32:
        y, p = y.astype(np.float32).astype(np.float64), p.astype(np.float32).astype(np.float64)
    got = float(_accumulate(R2ScoreMetric(), y, p, cuts, dtype))
    expected = r2_score(y, p)
    scale = max(1.0, abs(expected))
    tol = 1e-9 if dtype == torch.float64 else 1e-5
    if np.ptp(y) < 1e-6 * max(1.0, np.abs(y).max()):
        # (near-)constant labels: R² is ill-conditioned; only exact constants are defined
        return
    assert abs(got - expected) <= tol * scale


@pytest.mark.parametrize("multioutput", ["uniform_average", "raw_values", "variance_weighted"])
@settings(max_examples=40, deadline=None)
@given(data=regression_data(outputs=3))
def test_multioutput_r2_matches_sklearn(multioutput, data) -> None:
    y, p, cuts = data
    got = _accumulate(R2ScoreMetric(3, multioutput), y, p, cuts, torch.float64).numpy()
    expected = r2_score(y, p, multioutput=multioutput)
    ill = np.ptp(y, axis=0) < 1e-6 * np.maximum(1.0, np.abs(y).max(axis=0))
    if ill.any():
        return
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)


def test_r2_of_constant_labels_follows_sklearn() -> None:
    y = torch.tensor([2.0, 2.0, 2.0], dtype=torch.float64)
    assert float(tt_r2_score(y, y)) == r2_score(y.numpy(), y.numpy()) == 1.0
    p = torch.tensor([2.0, 2.0, 3.0], dtype=torch.float64)
    assert float(tt_r2_score(y, p)) == r2_score(y.numpy(), p.numpy()) == 0.0


@settings(max_examples=40, deadline=None)
@given(data=regression_data())
def test_smape_matches_its_definition(data) -> None:
    y, p, cuts = data
    denominator = np.abs(p) + np.abs(y)
    ratio = np.divide(np.abs(p - y), denominator, out=np.zeros_like(y), where=denominator != 0)
    expected = 200.0 * ratio.mean()
    assert float(_accumulate(SMAPEMetric(), y, p, cuts, torch.float64)) == pytest.approx(
        expected, rel=1e-9, abs=1e-12
    )


def test_smape_hand_computed() -> None:
    # |3-1|/(3+1) = 0.5, 0/0 -> 0, |0-2|/2 = 1 -> 200 * 1.5 / 3 = 100
    y, p = torch.tensor([1.0, 0.0, 2.0]), torch.tensor([3.0, 0.0, 0.0])
    assert float(tt_smape(y, p)) == pytest.approx(100.0)


def test_shape_errors_name_the_arguments() -> None:
    with pytest.raises(ValueError, match=r"`labels` and `predictions` must have the same shape"):
        MSEMetric().update(torch.zeros(3), torch.zeros(4))
    with pytest.raises(
        ValueError, match=r"Argument `num_outputs` must be an integer >= 1. Received: num_outputs=0"
    ):
        R2ScoreMetric(num_outputs=0)
    with pytest.raises(ValueError, match=r"Argument `multioutput` must be one of"):
        R2ScoreMetric(multioutput="mean")
    with pytest.raises(
        ValueError, match=r"Argument `labels` must have shape \(N,\) for num_outputs=1"
    ):
        R2ScoreMetric().update(torch.zeros(3, 2), torch.zeros(3, 2))
