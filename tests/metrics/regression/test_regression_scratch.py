"""The blocked eager CPU regression sums reuse per-thread float64 scratch buffers (issue 16):
results stay those of float64 arithmetic (scikit-learn in float64 is the oracle) whatever
ran before, in any thread, and the caller's tensors are never written."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch
from sklearn.metrics import mean_absolute_error, mean_squared_error, r2_score

from torchtally.functional.regression import _errors, _r2
from torchtally.metrics import MAEMetric, MSEMetric, R2ScoreMetric


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    for module in (_errors, _r2):  # blocks of 300 elements from 1000 up
        monkeypatch.setattr(module, "_BLOCK_FROM", 1000)
        monkeypatch.setattr(module, "_BLOCK", 300)


def _oracles(labels: torch.Tensor, predictions: torch.Tensor) -> list[float]:
    y, p = labels.double().numpy(), predictions.double().numpy()
    return [mean_squared_error(y, p), mean_absolute_error(y, p), r2_score(y, p)]


def _metrics(labels: torch.Tensor, predictions: torch.Tensor) -> list[float]:
    out = []
    for metric in (MSEMetric(), MAEMetric(), R2ScoreMetric()):
        metric.update(labels, predictions)
        out.append(float(metric.compute()))
    return out


@pytest.mark.usefixtures("small_blocks")
@pytest.mark.parametrize("label_dtype", [torch.bool, torch.float16, torch.float64])
def test_scratch_reuse_across_sizes_and_dtypes(label_dtype: torch.dtype) -> None:
    g = torch.Generator().manual_seed(7)
    for size in (2501, 1000, 4000):  # a larger, a smaller, then a larger batch again
        labels = (torch.randn(size, generator=g) * 3).to(label_dtype)
        predictions = torch.randn(size, generator=g) * 3
        before = (labels.clone(), predictions.clone())
        got, expected = _metrics(labels, predictions), _oracles(labels, predictions)
        np.testing.assert_allclose(got, expected, rtol=1e-12)
        assert torch.equal(labels, before[0]) and torch.equal(predictions, before[1])


@pytest.mark.usefixtures("small_blocks")
def test_threads_use_their_own_scratch() -> None:
    g = torch.Generator().manual_seed(8)
    inputs = [(torch.randn(3001, generator=g), torch.randn(3001, generator=g)) for _ in range(4)]
    expected = [_oracles(y, p) for y, p in inputs]
    results: dict[int, list[list[float]]] = {}
    start = threading.Barrier(len(inputs))

    def work(i: int) -> None:
        start.wait()
        results[i] = [_metrics(*inputs[i]) for _ in range(20)]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(inputs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for i, runs in results.items():
        for got in runs:
            np.testing.assert_allclose(got, expected[i], rtol=1e-12)
    assert len(results) == len(inputs)


@pytest.mark.usefixtures("small_blocks")
def test_inputs_that_require_grad_never_reach_the_shared_buffers() -> None:
    """A functional called on a tensor that requires grad gives autograd's float64 gradients
    (2 (p - y) for the squared error sum) and leaves no graph behind: later sums and metric
    states of the thread carry none (a shared buffer copied from such a tensor would)."""
    from torchtally.functional.aggregation._mean import mean_update
    from torchtally.functional.regression._errors import (
        squared_error_sum,
        squared_error_sum_checked,
    )
    from torchtally.functional.regression._r2 import r2_sums, r2_sums_checked

    g = torch.Generator().manual_seed(5)
    labels = torch.randn(2000, generator=g)
    predictions = torch.randn(2000, generator=g).requires_grad_()
    (total,) = torch.autograd.grad(squared_error_sum(labels, predictions), predictions)
    expected = 2 * (predictions.detach().double() - labels.double())
    np.testing.assert_allclose(total.double().numpy(), expected.numpy(), rtol=1e-6)
    # the error sum: first of the squared error's results, third of R2's (after Σy and Σy²)
    assert squared_error_sum_checked(labels, predictions)[0].requires_grad
    for call in (r2_sums, r2_sums_checked):
        assert call(labels, predictions)[2].requires_grad
    assert mean_update(predictions, torch.rand(2000, generator=g))[0].requires_grad
    detached = predictions.detach()
    assert not squared_error_sum(labels, detached).requires_grad
    assert not squared_error_sum_checked(labels, detached)[0].requires_grad
    for call in (r2_sums, r2_sums_checked):
        assert not call(labels, detached)[2].requires_grad
    assert not mean_update(detached, torch.rand(2000, generator=g))[0].requires_grad
    for metric in (MSEMetric(), MAEMetric(), R2ScoreMetric()):
        metric.update(labels, predictions)  # the metric detaches its inputs itself
        assert not metric.compute().requires_grad


@pytest.mark.usefixtures("small_blocks")
def test_buffers_first_made_under_inference_mode_serve_later_calls(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An eval loop under `torch.inference_mode()` makes a thread's buffers; a later update
    outside it writes them (an inference tensor there raised); values stay scikit-learn's."""
    from torchtally.functional.aggregation import _mean
    from torchtally.metrics import MeanMetric

    monkeypatch.setattr(_mean, "_BLOCK_FROM", 1000)  # the weighted mean blocked too
    monkeypatch.setattr(_mean, "_BLOCK", 300)

    g = torch.Generator().manual_seed(8)
    labels, predictions = torch.randn(3000, generator=g), torch.randn(3000, generator=g)
    weights = torch.rand(3000, generator=g)
    got: list[list[float]] = []

    def fresh_thread() -> None:  # its own, not yet made, buffers
        with torch.inference_mode():
            first = _metrics(labels, predictions)
        mean = MeanMetric()
        mean.update(predictions, weights)
        got.extend([first, _metrics(labels, predictions), [float(mean.compute())]])

    thread = threading.Thread(target=fresh_thread)
    thread.start()
    thread.join()
    expected = _oracles(labels, predictions)
    assert len(got) == 3
    np.testing.assert_allclose(got[0], expected, rtol=1e-12)
    np.testing.assert_allclose(got[1], expected, rtol=1e-12)
    p, w = predictions.double().numpy(), weights.double().numpy()
    assert got[2][0] == pytest.approx(float((p * w).sum() / w.sum()), rel=1e-6)
