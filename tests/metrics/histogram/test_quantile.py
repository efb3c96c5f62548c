"""QuantileMetric against numpy's exact inverted-CDF quantiles, within its error bound."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import torchtally.metrics.histogram._quantile as quantile_module
from torchtally.metrics import MetricValueError
from torchtally.metrics.histogram import QuantileMetric


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(1, 300),
    bins=st.sampled_from([1, 7, 64, 1000]),
    shape=st.sampled_from(["uniform", "skewed", "clustered"]),
)
def test_estimates_are_within_one_bin_of_numpy(seed: int, n: int, bins: int, shape: str) -> None:
    rng = np.random.default_rng(seed)
    if shape == "uniform":
        x = rng.uniform(-2, 3, n)
    elif shape == "skewed":
        x = np.clip(rng.exponential(0.3, n) - 2, -2, 3)
    else:
        x = rng.choice([-1.5, 0.25, 2.0], n) + rng.normal(0, 1e-3, n)
    qs = (0.0, 0.1, 0.5, 0.9, 0.99, 1.0)
    metric = QuantileMetric(-2.0, 3.0, qs, num_bins=bins)
    half = n // 2
    metric.update(torch.tensor(x[:half]))
    metric.update(torch.tensor(x[half:]))
    exact = np.quantile(x, qs, method="inverted_cdf")
    assert np.all(np.abs(metric.compute().numpy() - exact) <= metric.error_bound + 1e-12)


def test_weights_equal_repetition() -> None:
    values = torch.tensor([0.1, 0.4, 0.8, 0.95])
    weights = torch.tensor([1.0, 3.0, 0.0, 2.0])
    weighted = QuantileMetric(0, 1, (0.25, 0.5, 0.75), num_bins=50)
    weighted.update(values, weights)
    repeated = QuantileMetric(0, 1, (0.25, 0.5, 0.75), num_bins=50)
    repeated.update(values.repeat_interleave(weights.long()))
    torch.testing.assert_close(weighted.compute(), repeated.compute())


def test_out_of_range_values_raise_and_empty_is_nan() -> None:
    assert torch.isnan(QuantileMetric(0, 1).compute()).all()
    metric = QuantileMetric(0, 1)
    metric.update(torch.tensor([0.5, 1.5, float("nan"), float("inf")]))
    with pytest.raises(MetricValueError, match=r"or NaN \(3 values\)"):
        metric.compute()
    with pytest.raises(ValueError, match="high > low"):
        QuantileMetric(1.0, 1.0)
    with pytest.raises(ValueError, match="`quantiles` must be values in"):
        QuantileMetric(0, 1, quantiles=(1.5,))


def test_histogram_data() -> None:
    metric = QuantileMetric(0, 1, num_bins=4)
    metric.update(torch.tensor([0.1, 0.3, 0.3, 1.0]))
    hist = metric.histogram()
    torch.testing.assert_close(
        hist["counts"], torch.tensor([1.0, 2.0, 0.0, 1.0], dtype=torch.float64)
    )
    assert hist["edges"].shape == (5,)


def test_docstring_example() -> None:
    result = doctest.testmod(quantile_module, extraglobs={"torch": torch})
    assert result.attempted > 0 and result.failed == 0
