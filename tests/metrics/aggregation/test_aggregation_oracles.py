"""Mean, perplexity and learning rate against numpy and torch.optim."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from torchtally.metrics import LearningRateMetric, MeanMetric, PerplexityMetric


@settings(max_examples=50, deadline=None)
@given(
    values=arrays(np.float64, st.integers(1, 50), elements=st.floats(-1e6, 1e6)),
    data=st.data(),
)
def test_weighted_mean_matches_numpy(values: np.ndarray, data: st.DataObject) -> None:
    weights = data.draw(arrays(np.float64, values.shape, elements=st.floats(0.01, 10)))
    metric = MeanMetric()
    half = len(values) // 2
    for part in (slice(0, half), slice(half, None)):
        metric.update(torch.tensor(values[part]), torch.tensor(weights[part]))
    # compute() returns float32, as cstorch (the float64 state is exact: see the dtype= check)
    expected = np.average(values, weights=weights)
    assert float(metric) == pytest.approx(expected, rel=1e-7, abs=1e-6)
    metric.update(torch.tensor([]), dtype=torch.float64)
    assert float(metric) == pytest.approx(expected, rel=1e-9, abs=1e-6)


def test_mean_with_scalar_weights_and_no_data() -> None:
    metric = MeanMetric("loss")
    assert math.isnan(float(metric))
    metric.update(torch.tensor(2.0))
    metric.update(torch.tensor([4.0, 6.0]), weight=0.5)
    assert float(metric) == pytest.approx((2.0 + 0.5 * 10.0) / 2.0)


def test_perplexity_is_exp_of_mean_token_loss() -> None:
    ppl = PerplexityMetric()
    # batch 1: 6 tokens with summed loss 3.0; batch 2: 2 of 4 tokens weighted, summed loss 1.0
    ppl.update(torch.zeros(2, 3, dtype=torch.long), torch.tensor(3.0))
    ppl.update(torch.zeros(4, dtype=torch.long), torch.tensor(1.0), torch.tensor([1.0, 0, 0, 2.0]))
    assert float(ppl) == pytest.approx(math.exp(4.0 / 8.0), rel=1e-7)  # float32, as cstorch
    assert ppl.compute().dtype == torch.float32


def test_learning_rate_follows_torch_scheduler() -> None:
    param = torch.zeros(1, requires_grad=True)
    optimizer = torch.optim.SGD([param], lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    metric = LearningRateMetric()
    assert math.isnan(float(metric))
    seen = []
    for _ in range(5):
        optimizer.step()
        scheduler.step()
        seen.append(float(metric(optimizer)))
    assert seen == pytest.approx([0.1, 0.05, 0.05, 0.025, 0.025])
    metric.update(torch.tensor(0.3))
    assert float(metric) == pytest.approx(0.3)
