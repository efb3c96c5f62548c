"""A large float32 batch summed in float32 then widened (issue 16) stays at float32 accuracy
of the mean, against numpy's float64 mean of the same values."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from torchtally.metrics import MeanMetric


@pytest.mark.parametrize("offset", [0.0, 1e3])
def test_large_float32_batches_mean_matches_numpy(offset: float) -> None:
    g = torch.Generator().manual_seed(0)
    batches = [torch.randn(n, generator=g) + offset for n in (5000, 70000, 3, 100000)]
    metric = MeanMetric()
    for batch in batches:
        metric.update(batch)
    expected = np.concatenate([b.double().numpy() for b in batches]).mean()
    assert float(metric.compute()) == pytest.approx(expected, rel=2e-6, abs=1e-5)
    assert float(metric.compute()) == pytest.approx(float(np.float32(expected)), rel=1e-6, abs=1e-5)


@pytest.mark.parametrize("weight", [1, 1.0, 2.5])
def test_large_float32_batch_functional_twin_is_float64(weight: float) -> None:
    from torchtally.functional.aggregation._mean import mean_update

    values = torch.randn(5000, generator=torch.Generator().manual_seed(1)) + 3.0
    weighted_sum, weight_total = mean_update(values, weight)
    assert weighted_sum.dtype == weight_total.dtype == torch.float64
    assert weighted_sum.shape == weight_total.shape == ()
    assert weight_total.item() == 5000 * weight
    expected = float(np.float64(weight) * values.double().numpy().sum())
    assert weighted_sum.item() == pytest.approx(expected, rel=1e-6)


def test_large_float32_batch_metric_equals_its_functional_twin() -> None:
    from torchtally.functional.aggregation._mean import mean_update

    values = torch.randn(5000, generator=torch.Generator().manual_seed(1)) + 3.0
    metric = MeanMetric()
    metric.update(values)  # the default weight: the summed-in-float32 path
    weighted_sum, weight_total = mean_update(values)
    # the state widens the same float32 sum as the functional does: bit for bit the same
    assert metric.weighted_sum.reshape(()).item() == weighted_sum.item()
    assert metric.weight_total.reshape(()).item() == weight_total.item() == 5000
