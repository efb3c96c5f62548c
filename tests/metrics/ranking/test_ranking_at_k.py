"""PrecisionAtKMetric and RecallAtKMetric against hand-computed values and a plain numpy
oracle of TensorFlow's sparse-label definitions (sets of labels, ties to the lower id)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from torchtally._errors import MetricValueError
from torchtally.functional.ranking import precision_at_k, recall_at_k
from torchtally.metrics import MetricCollection
from torchtally.metrics.ranking import PrecisionAtKMetric, RecallAtKMetric

SCORES = torch.tensor([[0.1, 0.5, 0.3, 0.2], [0.4, 0.1, 0.2, 0.3], [0.3, 0.3, 0.3, 0.0]])
LABELS = torch.tensor([[1, 3], [2, 2], [2, 0]])


def test_hand_computed() -> None:
    # top-2 per row: {1, 2}, {0, 3}, {0, 1} (three tied 0.3: the lower ids win).
    # Precision counts distinct labels {1, 3}, {2}, {0, 2}; hits: 1 (label 1), 0, 1 (label 0).
    # Recall counts every label (a repeat too, as cstorch): 2 + 2 + 2 labels, the same hits.
    precision, recall = PrecisionAtKMetric(2), RecallAtKMetric(2)
    for metric in (precision, recall):
        metric.update(LABELS[:1], SCORES[:1])
        metric.update(LABELS[1:], SCORES[1:])
    assert float(precision.compute()) == pytest.approx(2 / (3 * 2))
    assert float(recall.compute()) == pytest.approx(2 / (2 + 2 + 2))


def test_hand_computed_with_weights() -> None:
    weights = torch.tensor([3.0, 1.0, 0.0])  # row 3 masked
    precision, recall = PrecisionAtKMetric(2), RecallAtKMetric(2)
    precision.update(LABELS, SCORES, weights)
    recall.update(LABELS, SCORES, weights)
    assert float(precision.compute()) == pytest.approx((3 * 1) / (2 * (3 + 1)))
    assert float(recall.compute()) == pytest.approx((3 * 1) / (3 * 2 + 1 * 2))
    scalar = PrecisionAtKMetric(1)
    scalar.update(LABELS, SCORES, torch.tensor(2.0))
    # top-1: {1}, {0}, {0} (tie to the lower id): hits in rows 1 and 3.
    assert float(scalar.compute()) == pytest.approx(2 / 3)


def _oracle(
    labels: np.ndarray, scores: np.ndarray, k: int, weights: np.ndarray
) -> tuple[float, float]:
    """Precision@k as TF (labels a set per row, Python sets) and recall@k as cstorch (every
    label occurrence counts), row by row."""
    hits = label_hits = relevant = weight = 0.0
    for row_labels, row_scores, w in zip(labels, scores, weights):
        top = set(np.argsort(-row_scores, kind="stable")[:k].tolist())  # ties: lower id
        hits += w * len(top & set(row_labels.tolist()))
        label_hits += w * sum(label in top for label in row_labels.tolist())
        relevant += w * len(row_labels)
        weight += w
    return hits / (k * weight), label_hits / relevant


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(1, 30),
    num_classes=st.integers(1, 9),
    num_labels=st.integers(1, 4),
    data=st.data(),
    weighted=st.booleans(),
    dtype=st.sampled_from([torch.float32, torch.float64]),
)
def test_matches_numpy_oracle(
    seed: int,
    n: int,
    num_classes: int,
    num_labels: int,
    data: st.DataObject,
    weighted: bool,
    dtype: torch.dtype,
) -> None:
    k = data.draw(st.integers(1, num_classes))
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, num_classes, (n, num_labels))  # repeats within rows included
    scores = np.round(rng.normal(size=(n, num_classes)), 1)  # ties included
    weights = rng.integers(1, 4, n).astype(np.float64) if weighted else np.ones(n)
    precision, recall = PrecisionAtKMetric(k), RecallAtKMetric(k)
    cut = n // 3
    for part in (slice(0, cut), slice(cut, n)):
        w = torch.as_tensor(weights[part]) if weighted else None
        args = (torch.as_tensor(labels[part]), torch.as_tensor(scores[part]).to(dtype), w)
        precision.update(*args)
        recall.update(*args)
    expected_precision, expected_recall = _oracle(labels, scores, k, weights)
    assert float(precision.compute()) == pytest.approx(expected_precision, rel=1e-12)
    assert float(recall.compute()) == pytest.approx(expected_recall, rel=1e-12)


def test_one_label_per_sample_and_functional_forms() -> None:
    labels = torch.tensor([1, 0, 3])  # top-1 {1}, {0}, {0}; top-3 {1, 2, 3}, {0, 3, 2}, {0, 1, 2}
    assert float(precision_at_k(labels, SCORES, 1)) == pytest.approx(2 / 3)
    assert float(recall_at_k(labels, SCORES, 3)) == pytest.approx(2 / 3)
    metric = RecallAtKMetric(3)
    metric.update(labels, SCORES)
    assert metric.compute() == pytest.approx(float(recall_at_k(labels, SCORES, 3)), rel=1e-12)


def test_out_of_range_labels_follow_tf_when_unchecked() -> None:
    """TF ignores out-of-range labels for precision and counts them as misses for recall;
    with value checks (the default) they are reported instead."""
    labels = torch.tensor([[1, -1]])
    scores = torch.tensor([[0.1, 0.9, 0.0]])
    precision = PrecisionAtKMetric(1, check_values=False)
    recall = RecallAtKMetric(1, check_values=False)
    precision.update(labels, scores)
    recall.update(labels, scores)
    assert float(precision.compute()) == 1.0
    assert float(recall.compute()) == 0.5
    checked = RecallAtKMetric(1)
    checked.update(labels, scores)
    with pytest.raises(MetricValueError, match=r"labels outside \[0, num_classes\) \(1 value\)"):
        checked.compute()


def test_precision_and_recall_share_one_update_in_a_collection() -> None:
    precision, recall = PrecisionAtKMetric(2), RecallAtKMetric(2)
    assert precision.shared_statistic() == recall.shared_statistic()
    collection = MetricCollection([precision, recall])
    assert collection.groups == [["precision_at_k", "recall_at_k"]]
    collection.update(LABELS, SCORES)
    values = collection.compute()
    assert float(values["precision_at_k"]) == pytest.approx(1 / 3)
    assert float(values["recall_at_k"]) == pytest.approx(2 / 6)


def test_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match=r"^Argument `k` must be an integer >= 1\. Received: k=0"):
        PrecisionAtKMetric(0)
    with pytest.raises(ValueError, match=r"`k` must be at most num_classes"):
        PrecisionAtKMetric(5).update(LABELS, SCORES)
    with pytest.raises(ValueError, match=r"`predictions` must be a floating-point tensor"):
        RecallAtKMetric(1).update(LABELS, SCORES.long())
    with pytest.raises(TypeError, match=r"`labels` must hold integer class ids"):
        RecallAtKMetric(1).update(LABELS.float(), SCORES)
    with pytest.raises(ValueError, match=r"`weights` must be a scalar or hold one weight"):
        RecallAtKMetric(1).update(LABELS, SCORES, torch.ones(2))
    assert math.isnan(PrecisionAtKMetric(1).compute())
