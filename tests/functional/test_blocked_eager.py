"""Eager CPU work in cache-sized blocks (issue 16) gives exactly the one-piece result: large
batches against independent oracles (numpy counts, scikit-learn's top-k accuracy)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.metrics import top_k_accuracy_score

from torchtally.functional import _blocks
from torchtally.functional._checks import count_nonfinite
from torchtally.functional.classification import _top_k_accuracy as top_k_module
from torchtally.functional.classification._top_k_accuracy import top_k_accuracy
from torchtally.metrics import TopKAccuracyMetric


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    # Blocks of 1000 elements from 5000 up: many blocks and a ragged last one, at test sizes.
    monkeypatch.setattr(_blocks, "BLOCK_ELEMENTS", 1000)
    monkeypatch.setattr(_blocks, "_BLOCK_FROM", 5000)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_blocked_nonfinite_count_matches_numpy(small_blocks: None, dtype: torch.dtype) -> None:
    g = torch.Generator().manual_seed(1)
    values = torch.randn(7, 1234, generator=g).to(dtype)
    flat = values.view(-1)
    picks = torch.randint(0, flat.numel(), (60,), generator=g)
    for i, bad in enumerate(picks.tolist()):
        flat[bad] = (float("nan"), float("inf"), float("-inf"))[i % 3]
    expected = int((~np.isfinite(values.double().numpy())).sum())
    assert int(count_nonfinite(values)) == expected
    assert int(count_nonfinite(values.t())) == expected  # not contiguous: one piece


@pytest.mark.parametrize("shape", [(3001, 7), (450, 33)])
def test_blocked_top_k_matches_sklearn_with_ties(
    small_blocks: None, monkeypatch: pytest.MonkeyPatch, shape
) -> None:
    # top-k's eager float ranks block by their own sizes: blocks of 1000 scores from 5000
    monkeypatch.setattr(top_k_module, "_BLOCK_FROM", 5000)
    monkeypatch.setattr(top_k_module, "_BLOCK", 1000)
    g = torch.Generator().manual_seed(2)
    rows, classes = shape
    # Scores on a coarse grid: many ties, broken as scikit-learn does (higher index first).
    scores = torch.randint(0, 4, shape, generator=g).double()
    labels = torch.randint(0, classes, (rows,), generator=g)
    for k in (1, 3):
        expected = top_k_accuracy_score(
            labels.numpy(), scores.numpy(), k=k, labels=np.arange(classes)
        )
        assert float(top_k_accuracy(labels, scores, k=k)) == pytest.approx(expected, abs=1e-12)
        metric = TopKAccuracyMetric(k)
        metric.update(labels[:100], scores[:100])  # one piece
        metric.update(labels[100:], scores[100:])  # blocked
        assert float(metric.compute()) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("size", [70_000, (1 << 20) + 3])
def test_summed_nonfinite_count_matches_numpy(dtype: torch.dtype, size: int) -> None:
    # 70k: counted by a float sum in one piece; 2^20 + 3: blocks and a ragged last block
    g = torch.Generator().manual_seed(3)
    values = torch.randn(size, generator=g).to(dtype)
    picks = torch.randint(0, size, (500,), generator=g)
    values[picks[:200]] = float("nan")
    values[picks[200:350]] = float("inf")
    values[picks[350:]] = float("-inf")
    expected = int((~np.isfinite(values.numpy())).sum())
    got = count_nonfinite(values)
    assert got is not None and got.dtype == torch.int64 and got.dim() == 0
    assert int(got) == expected


@pytest.mark.parametrize("label_dtype", [torch.float32, torch.float64, torch.int64])
def test_blocked_regression_sums_match_sklearn(
    monkeypatch: pytest.MonkeyPatch, label_dtype: torch.dtype
) -> None:
    from sklearn.metrics import mean_absolute_error, mean_squared_error, r2_score

    from torchtally.functional.regression import _errors, _r2
    from torchtally.metrics import MAEMetric, MSEMetric, R2ScoreMetric

    for module in (_errors, _r2):  # blocks of 700 elements from 2000 up (ragged last block)
        monkeypatch.setattr(module, "_BLOCK_FROM", 2000)
        monkeypatch.setattr(module, "_BLOCK", 700)
    g = torch.Generator().manual_seed(4)
    labels = (torch.randn(5003, generator=g) * 3).to(label_dtype)
    predictions = torch.randn(5003, generator=g) * 3
    y, p = labels.double().numpy(), predictions.double().numpy()
    for metric, oracle in (
        (MSEMetric(), mean_squared_error),
        (MAEMetric(), mean_absolute_error),
        (R2ScoreMetric(), r2_score),
    ):
        metric.update(labels[:1000], predictions[:1000])  # one piece
        metric.update(labels[1000:], predictions[1000:])  # blocked
        assert float(metric.compute()) == pytest.approx(float(oracle(y, p)), rel=1e-12)
    assert np.array_equal(labels.double().numpy(), y)  # the inputs are not modified
    two = torch.stack([labels.double(), -labels.double()], 1)
    both = torch.stack([predictions.double(), predictions.double()], 1)
    metric = R2ScoreMetric(num_outputs=2, multioutput="raw_values")
    metric.update(two, both)
    expected = r2_score(two.numpy(), both.numpy(), multioutput="raw_values")
    np.testing.assert_allclose(metric.compute().numpy(), expected, rtol=1e-12)


@pytest.mark.parametrize("num_classes", [None, 3])
def test_blocked_binned_histogram_matches_numpy(
    monkeypatch: pytest.MonkeyPatch, num_classes: int | None
) -> None:
    from torchtally.functional.ranking import _binned_auroc

    # blocks of 90 rows from 300 elements up (ragged last block)
    monkeypatch.setattr(_binned_auroc, "_BLOCK_FROM", 300)
    monkeypatch.setattr(_binned_auroc, "_BLOCK", 270 if num_classes else 90)
    g = torch.Generator().manual_seed(5)
    n, bins = 1001, 7
    if num_classes is None:
        labels = torch.randint(0, 2, (n,), generator=g)
        scores = torch.rand(n, generator=g)
    else:
        labels = torch.randint(-1, num_classes + 1, (n,), generator=g)  # some invalid
        scores = torch.rand(n, num_classes, generator=g)
    scores.view(-1)[:5] = torch.tensor([0.0, 1.0, 1.5, -0.5, float("nan")])
    got = _binned_auroc.binned_auroc_update(labels, scores, bins, num_classes=num_classes)
    # numpy: bin = floor(score * bins) clamped to [0, bins - 1], NaN to bin 0
    s = np.nan_to_num(scores.numpy().astype(np.float64), nan=0.0)
    index = np.clip(np.floor(s * bins), 0, bins - 1).astype(np.int64)
    y = labels.numpy()
    expected = np.zeros((1 if num_classes is None else num_classes, 2, bins))
    if num_classes is None:
        np.add.at(expected[0], ((y > 0).astype(np.int64), index), 1.0)
    else:
        for k in range(num_classes):
            valid = (y >= 0) & (y < num_classes)
            np.add.at(expected[k], ((y[valid] == k).astype(np.int64), index[valid, k]), 1.0)
    np.testing.assert_array_equal(got.numpy(), expected)


def test_size_switches_do_not_split_a_compiled_graph() -> None:
    """The eager large-batch formulations (blocks, the summed non-finite count, MeanMetric's
    float32 sum) are never taken inside a graph: batch sizes on both sides of every
    threshold share one graph, and give the eager counts."""
    from torch._dynamo.testing import CompileCounterWithBackend

    from torchtally.functional.aggregation._mean import mean_update

    counter = CompileCounterWithBackend("aot_eager")

    def update(values: torch.Tensor) -> tuple[torch.Tensor | None, torch.Tensor, torch.Tensor]:
        return (count_nonfinite(values), *mean_update(values))

    compiled = torch.compile(update, backend=counter, fullgraph=True)
    g = torch.Generator().manual_seed(3)
    for size in (100, 3000, 5000, 70_000, 1 << 21, 100):
        values = torch.randn(size, generator=g)
        values[::997] = float("nan")
        torch._dynamo.maybe_mark_dynamic(values, 0)
        nonfinite, total, weight = compiled(values)
        assert int(nonfinite) == len(range(0, size, 997))  # type: ignore[arg-type]
        assert int(weight) == size and bool(total.isnan())  # NaN propagates to the sum
    assert counter.frame_count == 1
