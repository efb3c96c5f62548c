"""The ranking functionals: order-preserving keys, exact and binned AUROC on one batch, and
the integer sums exact AUROC relies on."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score

from torchtally.functional.ranking import (
    auroc,
    binned_auroc,
    binned_auroc_compute,
    binned_auroc_error_bound,
    binned_auroc_update,
    exact_auroc_compute,
    exact_auroc_update,
    score_keys,
)
from torchtally.functional.ranking._auroc import _chunked_sum


@settings(max_examples=80, deadline=None)
@given(
    values=st.lists(st.floats(allow_nan=False, width=32), min_size=2, max_size=40),
    wide=st.booleans(),
)
def test_score_keys_preserve_order_and_equality(values: list[float], wide: bool) -> None:
    dtype = torch.float64 if wide else torch.float32
    scores = torch.tensor([*values, 0.0, -0.0], dtype=dtype)
    keys = score_keys(scores, dtype)
    assert keys.dtype == (torch.int64 if wide else torch.int32)
    less = scores[:, None] < scores[None, :]
    equal = scores[:, None] == scores[None, :]
    assert torch.equal(keys[:, None] < keys[None, :], less)
    assert torch.equal(keys[:, None] == keys[None, :], equal)


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 200), grid=st.sampled_from([2, 7, 0]))
def test_auroc_matches_sklearn(seed: int, n: int, grid: int) -> None:
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, n)
    labels[:2] = [0, 1]
    scores = rng.integers(0, grid, n) / grid if grid else rng.normal(size=n)
    expected = roc_auc_score(labels, scores)
    got = auroc(torch.as_tensor(labels), torch.as_tensor(scores))
    assert got.dtype == torch.float64
    assert float(got) == pytest.approx(expected, rel=1e-12)
    # Rows with label code 0 (no sample) anywhere in the buffer change nothing.
    keys, codes = exact_auroc_update(torch.as_tensor(labels), torch.as_tensor(scores))
    padded_keys = torch.cat([keys, torch.zeros(5, dtype=keys.dtype), keys[:3]])
    padded_codes = torch.cat([codes, torch.zeros(len(padded_keys) - len(codes), dtype=codes.dtype)])
    assert float(exact_auroc_compute(padded_keys, padded_codes)) == pytest.approx(expected)


def test_auroc_multiclass_average_none_and_empty_input() -> None:
    labels = torch.tensor([0, 1, 2, 2, 1, 0])
    scores = torch.tensor(
        [
            [0.7, 0.2, 0.1],
            [0.2, 0.5, 0.3],
            [0.1, 0.2, 0.7],
            [0.3, 0.3, 0.4],
            [0.6, 0.3, 0.1],
            [0.4, 0.4, 0.2],
        ]
    )
    per_class = auroc(labels, scores, num_classes=3, average="none")
    expected = [roc_auc_score(labels == c, scores[:, c]) for c in range(3)]
    np.testing.assert_allclose(per_class.numpy(), expected, rtol=1e-12)
    macro = auroc(labels, scores, num_classes=3)
    assert float(macro) == pytest.approx(np.mean(expected))
    assert torch.isnan(auroc(torch.zeros(0, dtype=torch.long), torch.zeros(0)))


def test_binned_functionals_agree_and_bound_the_error() -> None:
    g = torch.Generator().manual_seed(3)
    labels = torch.randint(0, 2, (500,), generator=g)
    scores = torch.rand(500, generator=g)
    histogram = binned_auroc_update(labels[:200], scores[:200], 32)
    histogram += binned_auroc_update(labels[200:], scores[200:], 32)
    assert histogram.shape == (1, 2, 32) and float(histogram.sum()) == 500
    value = binned_auroc_compute(histogram)
    torch.testing.assert_close(value, binned_auroc(labels, scores, 32))
    bound = binned_auroc_error_bound(histogram)
    assert abs(float(value) - roc_auc_score(labels, scores)) <= float(bound)
    assert 0 < float(bound) < 0.02


def test_chunked_int32_sum_is_exact_beyond_int32() -> None:
    rows = 100_003  # not a multiple of the chunk width
    values = torch.full((rows,), rows, dtype=torch.int32)
    total = _chunked_sum(values)
    assert total.dtype == torch.int64 and int(total) == rows * rows > 2**31
