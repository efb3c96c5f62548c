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
