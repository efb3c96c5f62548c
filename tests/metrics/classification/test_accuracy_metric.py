"""AccuracyMetric against scikit-learn and cstorch's weighting rule."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import accuracy_score

from torchtally.functional import accuracy
from torchtally.metrics import AccuracyMetric


@settings(max_examples=50, deadline=None)
@given(n=st.integers(1, 80), num_classes=st.integers(2, 6), seed=st.integers(0, 2**31 - 1))
def test_accuracy_of_indices_and_scores_matches_sklearn(
    n: int, num_classes: int, seed: int
) -> None:
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, num_classes, (n,), generator=g)
    scores = torch.randn(n, num_classes, generator=g, dtype=torch.float64)
    expected = accuracy_score(labels.numpy(), scores.argmax(-1).numpy())
    from_scores, from_indices = AccuracyMetric(), AccuracyMetric()
    half = n // 2
    for part in (slice(0, half), slice(half, None)):
        from_scores.update(labels[part], scores[part])
        from_indices.update(labels[part], scores[part].argmax(-1).int())
    # float32 results, as cstorch
    assert float(from_scores) == pytest.approx(expected, rel=1e-7)
    assert float(from_indices) == pytest.approx(expected, rel=1e-7)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 60), seed=st.integers(0, 2**31 - 1))
def test_binary_scores_are_thresholded(n: int, seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, 2, (n,), generator=g)
    probabilities = torch.rand(n, generator=g)
    expected = accuracy_score(labels.numpy(), (probabilities.numpy() > 0.3).astype(int))
    assert float(accuracy(labels, probabilities, threshold=0.3)) == pytest.approx(expected)


def test_weights_divide_by_the_count_of_positive_weights() -> None:
    # cstorch: correct predictions are weighted; the denominator counts weights > 0.
    labels = torch.tensor([0, 1, 2, 3])
    predictions = torch.tensor([0, 1, 0, 3])
    weights = torch.tensor([2.0, 0.0, 1.0, 1.0])
    expected = (2.0 * 1 + 0.0 * 1 + 1.0 * 0 + 1.0 * 1) / 3
    assert float(accuracy(labels, predictions, weights)) == pytest.approx(expected)
    sample = np.array([2.0, 0.0, 1.0, 1.0])
    # with 0/1 weights it is scikit-learn's weighted accuracy
    binary = torch.tensor([1.0, 0.0, 1.0, 1.0])
    assert float(accuracy(labels, predictions, binary)) == pytest.approx(
        accuracy_score(labels.numpy(), predictions.numpy(), sample_weight=(sample > 0))
    )


def test_shape_mismatch_names_both_shapes() -> None:
    with pytest.raises(ValueError, match=r"labels.shape=\(3,\), predictions.shape=\(4, 2\)"):
        AccuracyMetric().update(torch.zeros(3, dtype=torch.long), torch.zeros(4, 2))
    with pytest.raises(ValueError, match="must hold floating-point class scores"):
        AccuracyMetric().update(
            torch.zeros(3, dtype=torch.long), torch.zeros(3, 2, dtype=torch.long)
        )
