"""MeanMetric with a Python weight takes a path without a broadcast product (issue 16); it
must equal numpy's weighted average of every element, for any weights and value dtypes."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from torchtally.functional.aggregation._mean import mean_update
from torchtally.metrics import MeanMetric

_batches = st.lists(
    st.tuples(
        st.lists(st.floats(-1e6, 1e6, width=32), min_size=0, max_size=20),
        st.one_of(st.integers(0, 5), st.floats(0.0, 10.0)),
    ),
    min_size=1,
    max_size=5,
)


@settings(max_examples=60, deadline=None)
@given(_batches)
def test_python_weights_match_numpy(batches: list[tuple[list[float], float]]) -> None:
    metric = MeanMetric()
    values, weights = [], []
    for batch, weight in batches:
        metric.update(torch.tensor(batch, dtype=torch.float32), weight)
        values += batch
        weights += [float(weight)] * len(batch)
    if sum(weights) == 0:
        assert torch.isnan(metric.compute())
        return
    expected = np.average(np.asarray(values, np.float32).astype(np.float64), weights=weights)
    assert float(metric.compute()) == pytest.approx(expected, rel=1e-6, abs=1e-3)


def test_python_and_tensor_weights_agree() -> None:
    g = torch.Generator().manual_seed(0)
    value = torch.randn(7, 3, generator=g)
    for weight in (1.0, 2.5, 0.0, 3):
        fast = mean_update(value, weight)
        general = mean_update(value, torch.tensor(float(weight)))
        assert fast[0].dtype == fast[1].dtype == torch.float64
        assert fast[0].shape == fast[1].shape == ()
        torch.testing.assert_close(fast[0], general[0], rtol=1e-6, atol=1e-6)
        torch.testing.assert_close(fast[1], general[1])


def test_integer_values_and_non_finite_values() -> None:
    metric = MeanMetric(check_values=False)
    metric.update(torch.tensor([1, 2, 4]), 2)
    assert float(metric.compute()) == pytest.approx(7 / 3)
    zero_weight_inf = mean_update(torch.tensor([float("inf")]), 0.0)[0]
    assert torch.isnan(zero_weight_inf)  # inf * 0, as the broadcast product gives


def test_a_tiny_python_weight_is_not_flushed_to_zero() -> None:
    # A positive weight below float32's range (hypothesis found 2e-195) is still a weight:
    # numpy's weighted average of [0.0] and [4.0] is 2.0, never 0 / 0.
    metric = MeanMetric()
    metric.update(torch.tensor([0.0]), 2.032424978633556e-195)
    assert float(metric.compute()) == 0.0
    metric.update(torch.tensor([4.0]), 2.032424978633556e-195)
    expected = np.average([0.0, 4.0], weights=[2.032424978633556e-195] * 2)
    assert float(metric.compute()) == pytest.approx(expected)
