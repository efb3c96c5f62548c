"""The task metrics are adapters over the native functionals: their values are NeuroBench
2.3.0's bit for bit (its own metric classes, called on the same batches) over dtypes, zero
pairs, NaNs and constant labels; and the native parameters they use leave the native defaults
as they were."""

from __future__ import annotations

import math

import pytest
import torch

import torchtally.bench as tb
from torchtally.functional import accuracy, mean_squared_error, r2_score, smape
from torchtally.functional.regression import r2_from_totals, squared_error_sum
from torchtally.functional.regression._r2 import r2_compute, r2_update

workload = pytest.importorskip("neurobench.metrics.workload")


def _same(ours: float, theirs: float) -> None:
    assert type(ours) is type(theirs) is float
    assert (math.isnan(ours) and math.isnan(theirs)) or ours == theirs, (ours, theirs)


def _regression_batches(seed: int, dtype: torch.dtype, shape: tuple[int, ...]) -> list[tuple]:
    g = torch.Generator().manual_seed(seed)
    batches = []
    for _ in range(4):
        labels = (torch.randn(shape, generator=g) * 3 + 1).to(dtype)
        preds = (labels + torch.randn(shape, generator=g)).to(dtype)
        batches.append((preds, labels))
    return batches


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
@pytest.mark.parametrize("seed", range(4))
def test_mse_and_smape_match_neurobench_bit_for_bit(seed: int, dtype: torch.dtype) -> None:
    for preds, labels in _regression_batches(seed, dtype, (33, 3)):
        # zero pairs (0/0), exact hits, and a lone zero on either side
        preds[0, 0] = labels[0, 0] = 0
        preds[1, 1] = labels[1, 1]
        labels[2, 2] = 0
        for name in ("MSE", "SMAPE"):
            theirs = getattr(workload, name)()(None, preds, (None, labels))
            _same(getattr(tb, name)()(None, preds, (None, labels)), theirs)
        preds[0, 0] = 1  # no zero pair left: a real SMAPE, not NeuroBench's 200
        theirs = workload.SMAPE()(None, preds, (None, labels))
        assert theirs < 200
        _same(tb.SMAPE()(None, preds, (None, labels)), theirs)


def test_smape_and_mse_of_integer_labels_and_nan_match_neurobench() -> None:
    labels = torch.arange(12)
    preds = torch.linspace(-2.0, 14.0, 12)
    for name in ("MSE", "SMAPE"):
        theirs = getattr(workload, name)()(None, preds, (None, labels))
        _same(getattr(tb, name)()(None, preds, (None, labels)), theirs)
    preds[3] = float("nan")
    for name in ("MSE", "SMAPE"):
        theirs = getattr(workload, name)()(None, preds, (None, labels))
        _same(getattr(tb, name)()(None, preds, (None, labels)), theirs)


@pytest.mark.parametrize(
    ("preds", "labels"),
    [
        (torch.tensor([1, 2, 3, 0]), torch.tensor([1, 0, 3, 0])),
        (torch.tensor([1.0, 2.0, 0.5]), torch.tensor([1, 2, 0])),  # float vs int: equality
        (torch.rand(7, 3), torch.rand(7, 3)),  # floating labels
        (torch.tensor([True, False]), torch.tensor([True, True])),
        (torch.randint(0, 3, (1001,)), torch.randint(0, 3, (1001,))),
        (torch.zeros(0, dtype=torch.int64), torch.zeros(0, dtype=torch.int64)),  # NaN
    ],
)
def test_accuracy_matches_neurobench_bit_for_bit(preds: torch.Tensor, labels: torch.Tensor) -> None:
    theirs = workload.ClassificationAccuracy()(None, preds, (None, labels))
    _same(tb.ClassificationAccuracy()(None, preds, (None, labels)), theirs)


def test_accuracy_of_every_fraction_matches_the_float32_mean() -> None:
    # k / n for every k of n up to 300: NeuroBench's float32 mean of the 0/1 values
    for n in range(1, 301):
        labels = torch.zeros(n, dtype=torch.int64)
        for k in range(n + 1):
            preds = torch.cat(
                [torch.zeros(k, dtype=torch.int64), torch.ones(n - k, dtype=torch.int64)]
            )
            theirs = torch.eq(preds, labels).float().mean().item()
            assert tb.ClassificationAccuracy()(None, preds, (None, labels)) == theirs


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("seed", range(5))
def test_r2_over_batches_matches_neurobench_bit_for_bit(seed: int, dtype: torch.dtype) -> None:
    theirs, ours = workload.R2(), tb.R2()
    theirs.reset()
    ours.reset()
    for preds, labels in _regression_batches(seed, dtype, (17, 2)):
        _same(ours(None, preds, (None, labels)), theirs(None, preds, (None, labels)))


def test_r2_of_constant_labels_is_neurobench_s_division() -> None:
    # one column constant: NeuroBench divides by 0 (an R² of -inf), no scikit-learn rule
    labels = torch.tensor([[1.0, 2.0], [1.0, 3.0], [1.0, 5.0]])
    preds = torch.tensor([[1.5, 2.0], [1.0, 3.5], [0.5, 4.0]])
    theirs, ours = workload.R2(), tb.R2()
    theirs.reset()
    ours.reset()
    _same(ours(None, preds, (None, labels)), theirs(None, preds, (None, labels)))
    assert ours.compute() == -math.inf


# ---------------------------------------------- the native parameters, and the defaults


def test_native_defaults_are_unchanged_by_the_new_parameters() -> None:
    g = torch.Generator().manual_seed(9)
    labels, preds = torch.randn(50, 3, generator=g), torch.randn(50, 3, generator=g)
    labels[0, 0] = preds[0, 0] = 0.0
    assert mean_squared_error(labels, preds).dtype == torch.float64
    torch.testing.assert_close(
        mean_squared_error(labels, preds), ((preds.double() - labels.double()) ** 2).mean()
    )
    p, y = preds.double(), labels.double()
    ratio = (p - y).abs() / (p.abs() + y.abs())
    torch.testing.assert_close(smape(labels, preds), 200 * ratio.nan_to_num(0.0).mean())
    # r2_compute goes through r2_from_totals("safe"): scikit-learn's rule for constant labels
    labels[:, 1] = 2.0
    sums = r2_update(labels, preds)
    assert torch.equal(r2_compute(*sums, "raw_values"), r2_score(labels, preds, "raw_values"))
    assert r2_score(labels, preds, "raw_values")[1] == 0.0
    assert accuracy(torch.tensor([0, 1, 1]), torch.tensor([0.2, 0.9, 0.4])) == 2 / 3  # thresholded


def test_native_input_dtype_and_nan_zero_pairs() -> None:
    g = torch.Generator().manual_seed(2)
    labels, preds = torch.randn(40, generator=g), torch.randn(40, generator=g)
    labels[5] = preds[5] = 0.0
    assert torch.equal(
        mean_squared_error(labels, preds, input_dtype=True), torch.mean((preds - labels) ** 2)
    )
    assert mean_squared_error(labels, preds, input_dtype=True).dtype == torch.float32
    assert torch.equal(
        squared_error_sum(labels, preds, input_dtype=True), torch.sum((labels - preds) ** 2)
    )
    assert smape(labels, preds, input_dtype=True).dtype == torch.float32
    assert torch.isnan(smape(labels, preds, input_dtype=True, zero_pairs="nan"))
    assert torch.isnan(smape(labels, preds, zero_pairs="nan"))  # float64 path too
    float64_zero = smape(labels, preds)
    torch.testing.assert_close(
        smape(labels, preds, input_dtype=True).double(), float64_zero, rtol=1e-5, atol=0
    )
    with pytest.raises(ValueError, match="zero_pairs"):
        smape(labels, preds, zero_pairs="skip")
    with pytest.raises(ValueError, match="division"):
        r2_from_totals(torch.ones(2), torch.ones(2), division="exact")
    # the reciprocal division: 1 - sse * (1 / total), constant labels unguarded
    sse, total = torch.tensor([1.0, 1.0]), torch.tensor([3.0, 0.0])
    raw = r2_from_totals(sse, total, "raw_values", division="reciprocal")
    assert raw[0] == 1 - 1.0 * torch.tensor(3.0).reciprocal() and raw[1] == -math.inf
    assert r2_from_totals(sse, total, "raw_values")[1] == 0.0
    # accuracy by value: floats compared as they are, floating labels accepted
    labels_f = torch.tensor([0.5, 1.0, 2.0])
    assert accuracy(labels_f, torch.tensor([0.5, 1.0, 0.0]), as_values=True) == 2 / 3
    with pytest.raises(TypeError, match="integer class indices"):
        accuracy(labels_f, torch.tensor([0.5, 1.0, 0.0]))


def test_native_float32_mean_accuracy_is_the_kernel_s_mean() -> None:
    g = torch.Generator().manual_seed(4)
    labels = torch.randint(0, 3, (997,), generator=g)
    preds = torch.randint(0, 3, (997,), generator=g)
    ours = accuracy(labels, preds, float32_mean=True)
    assert ours.dtype == torch.float32
    assert torch.equal(ours, torch.eq(preds, labels).float().mean())
    assert accuracy(labels, preds).dtype == torch.float64  # the default is unchanged
    scores = torch.rand(997, 3, generator=g)  # class scores: argmax, then the mean
    assert torch.equal(
        accuracy(labels, scores, float32_mean=True),
        torch.eq(scores.argmax(-1), labels).float().mean(),
    )
    with pytest.raises(ValueError, match="float32_mean"):
        accuracy(labels, preds, torch.ones(997), float32_mean=True)
    with pytest.raises(ValueError, match="ignore_index"):
        accuracy(labels, preds, ignore_index=0, float32_mean=True)
    # Why it is a parameter: a count scaled by a float32 1/n (CUDA's mean kernel) is not
    # always k / n rounded, which a float64 quotient cast to float32 would give.
    scaled = [
        (torch.tensor(float(k)) * (torch.tensor(1.0) / n)).item() != float(torch.tensor(k / n))
        for n in range(1, 200)
        for k in range(n + 1)
    ]
    assert any(scaled)
