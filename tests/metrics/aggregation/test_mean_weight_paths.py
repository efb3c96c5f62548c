"""MeanMetric's weighted paths (issue 16): one weight for every value (a Python number, which
the boundary makes a tensor, or a one-element tensor) is w·Σv and w·N; a weight per value is
one float64 dot product, in blocks through scratch buffers for large eager CPU batches. Each
must equal numpy's weighted average in float64 (the oracle), with the old edge semantics."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from torchtally.functional.aggregation import _mean
from torchtally.functional.aggregation._mean import mean_update
from torchtally.metrics import MeanMetric, MetricValueError


def _data(size: int, seed: int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(size, generator=g, dtype=torch.float64) * 10 + 3).to(dtype)


@pytest.mark.parametrize("weight", [2.5, 3, torch.tensor(0.25), torch.tensor([4.0])])
@pytest.mark.parametrize("size", [1, 64, 5000])
def test_one_weight_for_every_value_matches_numpy(weight: object, size: int) -> None:
    values = [_data(size, seed) for seed in (1, 2)]
    metric = MeanMetric()
    for batch in values:
        metric.update(batch, weight)
    w = float(weight) if not isinstance(weight, torch.Tensor) else float(weight.reshape(()))
    every = np.concatenate([v.numpy() for v in values])
    expected = np.average(every, weights=np.full(every.shape, w))
    assert float(metric.compute().double()) == pytest.approx(expected, rel=1e-6)
    weighted, total = mean_update(values[0], weight)  # type: ignore[arg-type]
    assert weighted.dtype == total.dtype == torch.float64 and weighted.shape == total.shape == ()
    assert float(total) == w * size
    assert float(weighted) == pytest.approx(w * float(values[0].sum()), rel=1e-12)


def test_one_weight_edge_semantics() -> None:
    # an empty batch adds nothing whatever its weight; inf * 0 is NaN as in the product
    assert [float(t) for t in mean_update(torch.tensor([]), torch.tensor(math.inf))] == [0, 0]
    weighted, total = mean_update(torch.tensor([math.inf, 1.0]), torch.tensor(0.0))
    assert math.isnan(float(weighted)) and float(total) == 0.0
    metric = MeanMetric()
    metric.update(torch.tensor([1.0, 2.0]), torch.tensor(-1.0))
    with pytest.raises(MetricValueError, match=r"negative weights \(1 value\)"):
        metric.compute()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64])
@pytest.mark.parametrize("blocks", [False, True])
def test_a_weight_per_value_matches_numpy(
    monkeypatch: pytest.MonkeyPatch, dtype: torch.dtype, blocks: bool
) -> None:
    if blocks:  # blocks of 700 elements from 2000 up (ragged last block)
        monkeypatch.setattr(_mean, "_BLOCK_FROM", 2000)
        monkeypatch.setattr(_mean, "_BLOCK", 700)
    values = _data(5003, 3, dtype)
    weights = _data(5003, 4).abs().to(torch.float32)
    before = (values.clone(), weights.clone())
    weighted, total = mean_update(values, weights)
    v, w = values.double().numpy(), weights.double().numpy()
    assert float(weighted) == pytest.approx(float((v * w).sum()), rel=1e-12)
    assert float(total) == pytest.approx(float(w.sum()), rel=1e-12)
    metric = MeanMetric()
    metric.update(values[:2500], weights[:2500])
    metric.update(values[2500:], weights[2500:])
    assert float(metric.compute()) == pytest.approx(float(np.average(v, weights=w)), rel=1e-6)
    assert torch.equal(values, before[0]) and torch.equal(weights, before[1])


def test_a_weight_per_value_of_two_dimensions_and_strided() -> None:
    values = _data(3000, 5).reshape(50, 60)
    weights = _data(6000, 6).abs().reshape(60, 100)[:, ::2].t()  # (50, 60), not contiguous
    weighted, total = mean_update(values, weights)
    v, w = values.numpy(), weights.numpy()
    assert float(weighted) == pytest.approx(float((v * w).sum()), rel=1e-12)
    assert float(total) == pytest.approx(float(w.sum()), rel=1e-12)
