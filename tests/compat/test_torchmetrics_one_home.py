"""The compat weighted mean and perplexity are adapters over `torchtally.functional.aggregation`
(issue 28, "one home"): they give TorchMetrics 1.9's values, bit for bit where its own tests ask
(a float64 mean of unit weights equals `torch.mean`), keep its NaN strategies, and Perplexity's
batch value stays differentiable."""

from __future__ import annotations

import pytest
import torch
import torchmetrics

import torchtally.compat.torchmetrics as ttm


def test_float64_mean_of_unit_weights_is_torch_mean_exactly() -> None:
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        values = torch.randn(10000, generator=torch.Generator().manual_seed(0))
        metric = ttm.MeanMetric()
        metric.update(values)
        result = metric.compute()
        assert result.dtype == torch.float64
        assert result == torch.mean(values)
    finally:
        torch.set_default_dtype(previous)


@pytest.mark.parametrize("nan_strategy", ["warn", "ignore", "disable", 0.5])
@pytest.mark.parametrize("weight", [2.5, "tensor"])
def test_mean_with_nan_strategies_is_torchmetrics(nan_strategy: object, weight: object) -> None:
    generator = torch.Generator().manual_seed(1)
    ours = ttm.MeanMetric(nan_strategy=nan_strategy)
    theirs = torchmetrics.MeanMetric(nan_strategy=nan_strategy)
    for _ in range(3):
        values = torch.randn(7, generator=generator)
        values[2] = float("nan")
        w = torch.rand(7, generator=generator) if weight == "tensor" else weight
        with pytest.warns(UserWarning) if nan_strategy == "warn" else _nothing():
            got = ours(values, w)
        # A number as weight is compared with TorchMetrics given that number per value: with a
        # float `nan_strategy` TorchMetrics writes weight 1 at a NaN through the broadcast view
        # of the number, so every weight becomes 1 (the drop-in sets 1 at the NaN only).
        their_w = w if isinstance(w, torch.Tensor) else torch.full_like(values, w)
        with pytest.warns(UserWarning) if nan_strategy == "warn" else _nothing():
            expected = theirs(values, their_w)
        torch.testing.assert_close(got, expected, equal_nan=True)
    torch.testing.assert_close(ours.compute(), theirs.compute(), equal_nan=True)


class _nothing:  # a context that expects nothing
    def __enter__(self) -> None:
        return None

    def __exit__(self, *args: object) -> None:
        return None


def test_perplexity_is_torchmetrics_and_its_batch_value_differentiable() -> None:
    generator = torch.Generator().manual_seed(2)
    logits = torch.randn(2, 5, 7, generator=generator, requires_grad=True)
    target = torch.randint(0, 7, (2, 5), generator=generator)
    target[0, 1] = -100
    ours = ttm.text.Perplexity(ignore_index=-100)
    theirs = torchmetrics.text.Perplexity(ignore_index=-100)
    value = ours(logits, target)
    torch.testing.assert_close(value, theirs(logits, target))
    value.backward()
    assert logits.grad is not None and logits.grad.abs().sum() > 0
    assert not ours.total_log_probs.requires_grad  # the state holds no graph
    torch.testing.assert_close(ours.compute(), theirs.compute())
